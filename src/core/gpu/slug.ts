// The short GPU type the hub groups providers by: 'NVIDIA GeForce RTX 3080' -> 'rtx3080'.

/** Words that name the vendor or the product family rather than the chip. */
const NOISE = new Set([
  'nvidia',
  'geforce',
  'tesla',
  'amd',
  'ati',
  'radeon',
  'instinct',
  'apple',
  'intel',
  'corporation',
  'graphics',
  'gpu',
  'generation',
  'series',
  'design',
]);

/** Memory size, memory type and form factor: 'H100 80GB HBM3' and 'H100 PCIe' are both an H100. */
const VARIANT = /^(\d+(?:\.\d+)?(?:gb|g|gib)|hbm\d*e?|gddr\d+x?|pcie|sxm\d*)$/;

/**
 * 'NVIDIA GeForce RTX 3080' -> 'rtx3080', 'NVIDIA H200' -> 'h200', 'H100 80GB HBM3' -> 'h100',
 * 'AMD Radeon RX 7900 XTX' -> 'rx7900xtx', 'Apple M2 Max' -> 'm2max'. Unknown input -> 'unknown'.
 */
export function gpuSlug(model: string): string {
  let s = model.toLowerCase();
  // pci.ids style names: 'Navi 31 [Radeon RX 7900 XT/7900 XTX]' -> the marketing name in brackets.
  const bracket = /\[([^\]]*radeon[^\]]*)\]/.exec(s);
  if (bracket?.[1]) s = bracket[1].split('/')[0] ?? s;
  s = s.replace(/\((r|tm|c)\)|[®™©]/g, ' ').replace(/with max-q design|max-q/g, ' ');
  const tokens = s
    .split(/[\s\-_/,()]+/)
    .map((t) => t.replace(/[^a-z0-9.]/g, ''))
    .filter((t) => t.length > 0 && !NOISE.has(t) && !VARIANT.test(t));
  const slug = tokens.join('').replace(/[^a-z0-9]/g, '');
  return slug || 'unknown';
}

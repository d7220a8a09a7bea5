#!/usr/bin/env node
// Draws the app icon (512x512) and the tray icons (one per state, 16 px and @2x 32 px) as PNG files in this
// folder. No image library: shapes are signed-distance functions, supersampled for smooth edges, and the
// PNG is written by hand (RGBA, zlib-deflated scanlines, CRC32 per chunk). Run: node resources/make-icons.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));

// ---------- PNG ----------
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/** rgba: Float32Array of straight (not premultiplied) 0..1 values, width*height*4. */
function encodePng(width, height, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  ihdr[10] = 0;
  ihdr[11] = 0;
  ihdr[12] = 0;
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 4 + 1);
    raw[row] = 0; // filter: none
    for (let i = 0; i < width * 4; i++) raw[row + 1 + i] = Math.round(Math.min(1, Math.max(0, rgba[y * width * 4 + i])) * 255);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

// ---------- shapes (signed distance: < 0 inside) ----------
const circle = (cx, cy, r) => (x, y) => Math.hypot(x - cx, y - cy) - r;
const ring = (cx, cy, r, half) => (x, y) => Math.abs(Math.hypot(x - cx, y - cy) - r) - half;
function roundRect(x0, y0, x1, y1, r) {
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const hx = (x1 - x0) / 2 - r;
  const hy = (y1 - y0) / 2 - r;
  return (x, y) => {
    const qx = Math.abs(x - cx) - hx;
    const qy = Math.abs(y - cy) - hy;
    return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
  };
}
function ellipse(cx, cy, rx, ry) {
  // Approximate distance, good enough for edges a pixel wide.
  return (x, y) => {
    const k = Math.hypot((x - cx) / rx, (y - cy) / ry);
    return ((k - 1) * Math.min(rx, ry));
  };
}
function segmentDistance(px, py, ax, ay, bx, by) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - ax - t * dx, py - ay - t * dy);
}
/** A stroke of width 2*half along a cubic Bezier, flattened into segments. */
function bezierStroke(p0, p1, p2, p3, half, steps = 48) {
  const pts = [];
  for (let i = 0; i <= steps; i++) {
    const t = i / steps;
    const u = 1 - t;
    pts.push([
      u * u * u * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t * t * t * p3[0],
      u * u * u * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t * t * t * p3[1],
    ]);
  }
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  return (x, y) => {
    // Far from the curve's box: the distance to the box is a safe lower bound (fast path).
    const bx = Math.max(minX - x, 0, x - maxX);
    const by = Math.max(minY - y, 0, y - maxY);
    if (bx > half || by > half) return Math.hypot(bx, by) - half;
    let d = Infinity;
    for (let i = 0; i < steps; i++) d = Math.min(d, segmentDistance(x, y, pts[i][0], pts[i][1], pts[i + 1][0], pts[i + 1][1]));
    return d - half;
  };
}
function triangle(a, b, c) {
  const edges = [
    [a, b],
    [b, c],
    [c, a],
  ];
  const sign = (p, q, r) => (p[0] - r[0]) * (q[1] - r[1]) - (q[0] - r[0]) * (p[1] - r[1]);
  return (x, y) => {
    const p = [x, y];
    const d1 = sign(p, a, b);
    const d2 = sign(p, b, c);
    const d3 = sign(p, c, a);
    const inside = !((d1 < 0 || d2 < 0 || d3 < 0) && (d1 > 0 || d2 > 0 || d3 > 0));
    const dist = Math.min(...edges.map(([s, e]) => segmentDistance(x, y, s[0], s[1], e[0], e[1])));
    return inside ? -dist : dist;
  };
}
const union = (...shapes) => (x, y) => {
  let d = Infinity;
  for (const s of shapes) d = Math.min(d, s(x, y));
  return d;
};

const hex = (h, a = 1) => [parseInt(h.slice(1, 3), 16) / 255, parseInt(h.slice(3, 5), 16) / 255, parseInt(h.slice(5, 7), 16) / 255, a];

/**
 * Paints layers back to front. Each layer: { shape, color: [r,g,b,a] | (x,y) => [r,g,b,a] } in a design
 * space of `design` units, drawn at `size` pixels with `ss` x `ss` samples per pixel.
 */
function render(size, design, layers, ss = 4) {
  const out = new Float32Array(size * size * 4);
  const scale = design / size;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < ss; sy++) {
        for (let sx = 0; sx < ss; sx++) {
          const x = (px + (sx + 0.5) / ss) * scale;
          const y = (py + (sy + 0.5) / ss) * scale;
          // Composite this sample (premultiplied "over").
          let sr = 0;
          let sg = 0;
          let sb = 0;
          let sa = 0;
          for (const layer of layers) {
            if (layer.shape(x, y) > 0) continue;
            const c = typeof layer.color === 'function' ? layer.color(x, y) : layer.color;
            const ca = c[3];
            sr = c[0] * ca + sr * (1 - ca);
            sg = c[1] * ca + sg * (1 - ca);
            sb = c[2] * ca + sb * (1 - ca);
            sa = ca + sa * (1 - ca);
          }
          r += sr;
          g += sg;
          b += sb;
          a += sa;
        }
      }
      const n = ss * ss;
      const i = (py * size + px) * 4;
      a /= n;
      out[i] = a > 0 ? r / n / a : 0;
      out[i + 1] = a > 0 ? g / n / a : 0;
      out[i + 2] = a > 0 ? b / n / a : 0;
      out[i + 3] = a;
    }
  }
  return out;
}

// ---------- the app icon: a white swan on a deep blue-to-teal tile ----------
function appIcon(size) {
  const top = hex('#1d2b6b');
  const bottom = hex('#0e8f8c');
  const tile = roundRect(24, 24, 488, 488, 104);
  const gradient = (_x, y) => {
    const t = Math.min(1, Math.max(0, (y - 24) / 464));
    return [top[0] + (bottom[0] - top[0]) * t, top[1] + (bottom[1] - top[1]) * t, top[2] + (bottom[2] - top[2]) * t, 1];
  };
  const bodyFull = union(ellipse(285, 345, 130, 58), triangle([360, 322], [436, 258], [412, 348]));
  const neck = bezierStroke([200, 335], [255, 262], [120, 228], [178, 150], 21);
  const head = circle(186, 146, 30);
  const beak = triangle([162, 132], [164, 162], [104, 160]);
  const wave = union(
    bezierStroke([110, 418], [160, 398], [200, 438], [256, 418], 8),
    bezierStroke([256, 418], [312, 398], [352, 438], [402, 418], 8),
  );
  return render(size, 512, [
    { shape: tile, color: gradient },
    { shape: wave, color: hex('#7dd3fc', 0.85) },
    { shape: union(bodyFull, neck, head), color: hex('#ffffff') },
    { shape: beak, color: hex('#f59e0b') },
    { shape: circle(180, 140, 5), color: hex('#1d2b6b') },
  ]);
}

// ---------- tray icons: a state colour plus a glyph, so they differ without colour too ----------
const TRAY = {
  serving: { color: '#16a34a' },
  paused: { color: '#d97706' },
  attention: { color: '#d97706' },
  disconnected: { color: '#6b7280' },
  'auth-failed': { color: '#dc2626' },
};

function trayIcon(state, size) {
  const c = hex(TRAY[state].color);
  const white = hex('#ffffff');
  const disc = circle(16, 16, 14);
  const layers = [];
  switch (state) {
    case 'serving':
      // A solid disc with a check mark.
      layers.push({ shape: disc, color: c });
      layers.push({ shape: union(bezierStroke([9, 16.5], [10.5, 18], [12, 19.5], [13.5, 21], 2.2), bezierStroke([13.5, 21], [16.5, 17], [19.5, 13.5], [23, 10.5], 2.2)), color: white });
      break;
    case 'paused':
      layers.push({ shape: disc, color: c });
      layers.push({ shape: union(roundRect(10, 9, 14, 23, 1), roundRect(18, 9, 22, 23, 1)), color: white });
      break;
    case 'disconnected':
      // A hollow ring: nothing flows.
      layers.push({ shape: ring(16, 16, 11.5, 2.8), color: c });
      break;
    case 'attention':
      // Serving, but not all is well (a model down, not routed, not earning): an amber disc with "!".
    case 'auth-failed':
      layers.push({ shape: disc, color: c });
      layers.push({ shape: union(roundRect(14.2, 7, 17.8, 19, 1.6), circle(16, 23.5, 2.1)), color: white });
      break;
  }
  return render(size, 32, layers, 6);
}

function write(name, size, pixels) {
  const file = path.join(here, name);
  fs.writeFileSync(file, encodePng(size, size, pixels));
  console.log(`${path.relative(process.cwd(), file)} ${size}x${size}`);
}

write('icon.png', 512, appIcon(512));
for (const state of Object.keys(TRAY)) {
  write(`tray-${state}.png`, 16, trayIcon(state, 16));
  write(`tray-${state}@2x.png`, 32, trayIcon(state, 32));
}

// A process that does nothing, run as `node --import tsx bench/idle-process.ts`: the floor of node plus
// the tsx loader that the idle figures are read against.
process.stdout.write('idle process ready\n');
const keepAlive = setInterval(() => undefined, 1 << 30);
process.once('SIGINT', () => {
  clearInterval(keepAlive);
  process.exit(0);
});

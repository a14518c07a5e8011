// `node scripts/bench-spawn.mjs` (the `spawn` part of `npm run bench`; after `npm run build`): what starting
// a sandboxed agent costs, and where.
//   (b) bubblewrap's own cost: wall and CPU time (the children's, from /proc/self/stat) of `/bin/true`, of
//       `bwrap <the sandbox's arguments> /bin/true` and of the whole sandbox as a run starts it (its options
//       through descriptor 3, the wrapper shell, `true`), spawned one after another from this process
//       while it is still small;
//   (a) then, with this process grown to about the server's size (BENCH_SPAWN_HEAP_MB of live objects),
//       per sandbox spawned one after another, the time the event loop is blocked in the spawn call (a
//       fork of this process and the wait for its exec), its busy time in all (event-loop utilization,
//       which also counts time the machine's other work took the core) and this process's CPU: with
//       child_process in this process, and through the spawner process (src/integrations/spawner.ts),
//       with the spawner's own CPU per spawn;
//   (c) sandboxes started and ended per second, BENCH_SPAWN_CONCURRENCY at a time for BENCH_SPAWN_SECONDS,
//       both ways, with the share of this process's event loop they took;
//   (d) the same through the spawner for sandboxes with an egress proxy's socket, as a run with a network
//       has: its bridge listening by socat alone, and by busybox's nc (which starts socat for each
//       connection only: none here), alternately, two rounds.
// BENCH_SPAWNS (200) spawns per row of (a) and (b). Prints the figures and ratios, then one JSON line.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { dist } from './bench-app.mjs';

const SPAWNS = Number(process.env.BENCH_SPAWNS ?? 200);
const HEAP_MB = Number(process.env.BENCH_SPAWN_HEAP_MB ?? 150);
const CONCURRENCY = Number(process.env.BENCH_SPAWN_CONCURRENCY ?? 4);
const SECONDS = Number(process.env.BENCH_SPAWN_SECONDS ?? 5);
const { EGRESS_SOCKET, findBusybox, sandboxArgs, sandboxUid, spawnSandbox } = dist('src/integrations/sandbox.js');
const { createSpawner, directSpawner } = dist('src/integrations/spawner.js');

const PATH = '/usr/bin:/bin';
const agent = { command: 'true', timeoutSeconds: 5, network: 'none' };
const uid = sandboxUid(agent);
const options = sandboxArgs({ runDir: null, home: '/nonexistent-home', agent, env: { PATH }, limits: { workspaceMb: 1, tmpMb: 1 } });
const TICK_MS = 10; // USER_HZ: /proc's CPU times are in hundredths of a second

/** CPU milliseconds of a process (`self`: this one; children: those it waited for), from /proc/<pid>/stat. */
function cpuOf(pid = 'self', children = false) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [user, system] = children ? [fields[13], fields[14]] : [fields[11], fields[12]];
  return (Number(user) + Number(system)) * TICK_MS;
}

const rssMb = (pid = 'self') => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const ended = (child) => new Promise((resolve, reject) => child.once('error', reject).once('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit code ${code}`)))));

/** `spawner`, with the time its spawn calls blocked this process's event loop (milliseconds, one a call). */
function timed(spawner) {
  const blocked = [];
  return {
    blocked,
    spawn(...args) {
      const started = performance.now();
      const spawning = spawner.spawn(...args);
      blocked.push(performance.now() - started);
      return spawning;
    },
  };
}

/** A sandbox as a run starts one (with its options and bridge), `true` in it, through `spawner`; resolves when it is over. */
async function sandboxTrue(spawner, { options: given = options, busybox = null } = {}) {
  const { child } = await spawnSandbox(spawner, 'bwrap', given, 'true', { PATH }, { uid, stdio: ['ignore', 'ignore', 'ignore'], busybox });
  await ended(child);
}

/** `n` runs of `once` one after another: wall time of each, CPU of this process and its children, event-loop busy time. */
async function sequence(n, once) {
  for (let i = 0; i < 5; i++) await once(); // warm-up
  const walls = [];
  const [own, children, loop] = [process.cpuUsage(), cpuOf('self', true), performance.eventLoopUtilization()];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await once();
    walls.push(performance.now() - started);
  }
  const { active } = performance.eventLoopUtilization(loop);
  const used = process.cpuUsage(own);
  return { p50: quantile(walls, 0.5), p90: quantile(walls, 0.9), ownCpu: (used.user + used.system) / 1000 / n, childrenCpu: (cpuOf('self', true) - children) / n, loop: active / n };
}

/** Sandboxes started and ended per second, CONCURRENCY at a time, and the share of this event loop they took. */
async function throughput(spawner, sandbox) {
  const loop = performance.eventLoopUtilization();
  const until = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) {
      await sandboxTrue(spawner, sandbox);
      done++;
    }
  }));
  return { perSecond: done / SECONDS, loopShare: performance.eventLoopUtilization(loop).utilization };
}

const f = (ms) => (ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

// (b) from a small process
const small = rssMb();
const plain = await sequence(SPAWNS, () => ended(spawn('/bin/true', [], { stdio: 'ignore' })));
const bare = await sequence(SPAWNS, () => ended(spawn('bwrap', [...options, '--', '/bin/true'], { stdio: 'ignore', env: { PATH }, ...(uid === undefined ? {} : { uid, gid: uid }) })));
const whole = await sequence(SPAWNS, () => sandboxTrue(directSpawner));

// (a) from a process of the server's size: live objects it keeps (the server's are its modules, caches and pages)
const ballast = [];
while (rssMb() < small + HEAP_MB) ballast.push(Array.from({ length: 10_000 }, (_, i) => ({ i, text: `entry ${i} of ${ballast.length}` })));
// Collected once, so that the rows do not pay for the marking that growing the heap began.
setFlagsFromString('--expose-gc');
runInNewContext('gc')();
const large = rssMb();
const directTimed = timed(directSpawner);
const direct = await sequence(SPAWNS, () => sandboxTrue(directTimed));
const spawner = createSpawner();
await sandboxTrue(spawner); // the spawner starts
const spawnerPid = spawner.pid();
const spawnerBefore = cpuOf(spawnerPid);
const relayedTimed = timed(spawner);
const relayed = await sequence(SPAWNS, () => sandboxTrue(relayedTimed));
const spawnerCpu = (cpuOf(spawnerPid) - spawnerBefore) / (SPAWNS + 5);
const spawnerRss = rssMb(spawnerPid);

// (c) end to end, both ways
const directRate = await throughput(directSpawner);
const relayedRate = await throughput(spawner);

// (d) with an egress proxy's socket bound in (a listener that closes every connection: none comes)
const runDir = mkdtempSync(path.join(tmpdir(), 'flows-bench-bridge-'));
chmodSync(runDir, 0o711);
const proxy = createServer((socket) => socket.end());
await new Promise((resolve) => proxy.listen(path.join(runDir, EGRESS_SOCKET), resolve));
chmodSync(path.join(runDir, EGRESS_SOCKET), 0o666);
const networked = sandboxArgs({ runDir, home: '/nonexistent-home', agent, env: { PATH }, limits: { workspaceMb: 1, tmpMb: 1 } });
const busybox = findBusybox();
const bridges = [];
for (let round = 0; round < 2; round++) {
  bridges.push({ bridge: 'socat', ...(await throughput(spawner, { options: networked })) });
  if (busybox) bridges.push({ bridge: 'busybox', ...(await throughput(spawner, { options: networked, busybox })) });
}
proxy.close();
rmSync(runDir, { recursive: true, force: true });
await spawner.close();

console.log(`spawning a sandbox, ${SPAWNS} spawns a row, Node ${process.version}${uid === undefined ? '' : `, bubblewrap as uid ${uid}`}`);
console.log(`(b) from a small process (${small.toFixed(0)} MB): wall p50 / p90, CPU a spawn (the children's + this process's)`);
for (const [name, row] of [['/bin/true', plain], ['bwrap <sandbox arguments> /bin/true', bare], ['the sandbox as a run starts it, `true` in it', whole]]) {
  console.log(`  ${name.padEnd(46)} ${f(row.p50).padStart(6)} / ${f(row.p90).padStart(6)} ms, CPU ${f(row.childrenCpu)} + ${f(row.ownCpu)} ms (${(row.p50 / plain.p50).toFixed(1)} × /bin/true wall)`);
}
const [directBlocked, relayedBlocked] = [quantile(directTimed.blocked, 0.5), quantile(relayedTimed.blocked, 0.5)];
console.log(`(a) per sandbox, from a process of ${large.toFixed(0)} MB: event loop blocked in the spawn call (p50), busy in all, this process's CPU`);
console.log(`  child_process in this process:   blocked ${f(directBlocked)} ms, busy ${f(direct.loop)} ms, CPU ${f(direct.ownCpu)} ms (wall p50 ${f(direct.p50)} ms)`);
console.log(`  through the spawner (${spawnerRss.toFixed(0)} MB):   blocked ${f(relayedBlocked)} ms, busy ${f(relayed.loop)} ms, CPU ${f(relayed.ownCpu)} ms (wall p50 ${f(relayed.p50)} ms); the spawner's own CPU ${f(spawnerCpu)} ms a spawn`);
console.log(`  ratio, child_process / spawner: blocked ${(directBlocked / relayedBlocked).toFixed(0)} ×, busy ${(direct.loop / relayed.loop).toFixed(1)} ×, CPU ${(direct.ownCpu / relayed.ownCpu).toFixed(1)} ×`);
console.log(`(c) sandboxes started and ended, ${CONCURRENCY} at a time for ${SECONDS} s, from the ${large.toFixed(0)} MB process:`);
console.log(`  child_process in this process:   ${directRate.perSecond.toFixed(0)}/s, event loop ${(directRate.loopShare * 100).toFixed(0)} % busy`);
console.log(`  through the spawner:             ${relayedRate.perSecond.toFixed(0)}/s, event loop ${(relayedRate.loopShare * 100).toFixed(0)} % busy (${(relayedRate.perSecond / directRate.perSecond).toFixed(2)} × the rate)`);
console.log(`(d) the same through the spawner, with an egress proxy's socket: the bridge listening by`);
const [socatRates, busyboxRates] = ['socat', 'busybox'].map((name) => bridges.filter((row) => row.bridge === name).map((row) => row.perSecond));
console.log(`  socat alone:                     ${socatRates.map((rate) => `${rate.toFixed(0)}/s`).join(', ')}`);
if (busybox) {
  const ratio = busyboxRates.reduce((sum, rate) => sum + rate, 0) / socatRates.reduce((sum, rate) => sum + rate, 0);
  console.log(`  busybox's nc (${busybox}):  ${busyboxRates.map((rate) => `${rate.toFixed(0)}/s`).join(', ')} (${ratio.toFixed(2)} × socat alone)`);
} else console.log('  busybox: not on this machine (apt-get install busybox-static)');
console.log(JSON.stringify({ spawns: SPAWNS, smallMb: small, largeMb: large, spawnerMb: spawnerRss, plain, bare, whole, direct: { ...direct, blocked: directBlocked }, relayed: { ...relayed, blocked: relayedBlocked }, spawnerCpu, directRate, relayedRate, bridges }));
ballast.length = 0;

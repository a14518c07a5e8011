'use strict';
// Shared by the fake gemini, opencode and cursor-agent executables: replays a recorded stream from
// test/fixtures/agents, does the recorded side effects in the cwd, keeps issued session ids on disk and
// bends the stream as FAKE_AGENT_SCENARIO asks.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const FIXTURES = path.resolve(__dirname, '../../fixtures/agents');
// Recorded streams name this directory where the real run had its cwd; replays put the real cwd there.
const RECORDED_CWD = '/workspace/project';
const SCENARIOS = ['normal', 'truncated', 'malformed', 'no-result', 'error-after-result', 'sleep'];

function fail(message, code) {
  process.stderr.write(message.endsWith('\n') ? message : message + '\n');
  process.exit(code);
}

function scenario() {
  const name = process.env.FAKE_AGENT_SCENARIO || 'normal';
  if (!SCENARIOS.includes(name)) fail(`FAKE_AGENT_SCENARIO must be one of ${SCENARIOS.join(', ')}; got ${name}`, 2);
  return name;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Like the real CLIs: a prompt may come on stdin when it is not a terminal; an idle pipe ends the wait.
function readStdin(idleMs = 300) {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    let data = '';
    let timer = setTimeout(finish, idleMs);
    function finish() {
      clearTimeout(timer);
      process.stdin.removeAllListeners();
      process.stdin.pause();
      process.stdin.destroy();
      resolve(data.trim());
    }
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => {
      data += chunk;
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    });
    process.stdin.on('end', finish);
    process.stdin.on('error', finish);
  });
}

// Reads a fixture as raw lines with the recorded session id and cwd swapped for this run's.
function loadFixture(file, recordedSessionId, sessionId, cwd) {
  const raw = fs.readFileSync(path.join(FIXTURES, file), 'utf8');
  const cwdInJson = JSON.stringify(cwd).slice(1, -1);
  return raw.split('\n').filter((line) => line.length > 0).map((line) => line.split(recordedSessionId).join(sessionId).split(RECORDED_CWD).join(cwdInJson));
}

function runShell(command, cwd) {
  execFileSync('/bin/sh', ['-c', command], { cwd, stdio: 'ignore' });
}

function writeFile(filePath, content, cwd) {
  fs.writeFileSync(path.resolve(cwd, filePath), content);
}

/**
 * Prints lines one by one with a small pause. `sideEffect(event)` runs before a line is printed (a tool's
 * result line), `isResult(event, index, events)` marks the terminal event(s) that `no-result` leaves out.
 */
async function replay({ lines, sideEffect, isResult }) {
  const mode = scenario();
  const delay = Number(process.env.FAKE_AGENT_LINE_DELAY_MS || 5);
  const events = lines.map((line) => JSON.parse(line));
  const write = (text) => new Promise((resolve) => process.stdout.write(text, resolve));

  if (mode === 'sleep') {
    await write(lines[0] + '\n');
    await sleep(60_000);
    return 0;
  }
  const cutAt = Math.floor(lines.length / 2);
  for (let i = 0; i < lines.length; i++) {
    if (mode === 'no-result' && isResult(events[i], i, events)) continue;
    if (mode === 'truncated' && i === cutAt) {
      await write(lines[i].slice(0, Math.floor(lines[i].length / 2)));
      return 0;
    }
    sideEffect(events[i]);
    await write(lines[i] + '\n');
    if (mode === 'malformed' && i % 3 === 0) {
      await write('Loaded cached credentials.\n');
      await write(lines[i].slice(0, 25) + '\n');
      await write('{"type":"message","content":"unterminated\n');
    }
    await sleep(delay);
  }
  if (mode === 'error-after-result') {
    process.stderr.write('Error: connection reset by peer while flushing the session\n');
    return 1;
  }
  return 0;
}

// Issued session ids, one file each, under the directory the real CLI keeps its sessions in.
function sessionStore(dir) {
  return {
    has: (id) => /^[A-Za-z0-9_-]+$/.test(id) && fs.existsSync(path.join(dir, `${id}.json`)),
    add: (id, data) => {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ id, ...data }) + '\n');
    },
  };
}

module.exports = { fail, readStdin, loadFixture, replay, runShell, writeFile, sessionStore };

// `strata export --format perfetto` read by a real trace viewer: Chrome DevTools' trace engine (the importer of
// the Performance panel, npm @paulirish/trace_engine, installed by scripts/setup.sh into tests/viewer/). No
// Perfetto build is installable offline (not on npm nor in Debian) and headless Chromium has no chrome://tracing,
// so this is the real consumer the test drives; the structural checks of Perfetto's own rules (enclosing-slice
// flow binding, phases, metadata) are in tests/cli/check_export.py.
//
// Exports a synthetic 8-rank job (rank 5 slow, host counters, clocks skewed by up to ~0.9 ms) and asserts what
// the engine imported: no warnings; one process per rank named "rank N"; every slice and instant of the file
// present on its rank's threads, the threads named; the ranks' first step starting together (within the
// residual the export reports, whereas the raw clocks differ by hundreds of µs); the finding's instant on the
// straggler. Flows are not checked here: DevTools binds a flow end only to a slice with the same time, thread
// and category, which neither Kineto's own launch -> kernel flows nor an arrow landing inside a peer's call
// meet; check_export.py checks them by Perfetto's rule (the slice enclosing the end on its thread).
// Usage: node check_devtools_import.mjs STRATA_BINARY. Prints "N passed, N failed" last; exit 1 on a failure.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let Trace;
try {
  Trace = await import('@paulirish/trace_engine');
} catch (e) {
  console.log(`FAIL the trace engine is not installed (run scripts/setup.sh, which runs npm ci in tests/viewer): ${e.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
// The engine measures layout with DOMRect, which Node lacks.
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
};

const results = {passed: 0, failed: 0};
function check(name, ok, detail = '') {
  results[ok ? 'passed' : 'failed']++;
  console.log((ok ? 'ok   ' : 'FAIL ') + name + (ok ? '' : ': ' + detail));
}

const strata = path.resolve(process.argv[2]);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-viewer-'));
try {
  const job = path.join(tmp, 'job'), out = path.join(tmp, 'merged.json');
  execFileSync(strata, ['synth', '-o', job, '--no-progress', '--ranks', '8', '--fault', 'slow_compute', '--fault-rank', '5',
                        '--counters'], {stdio: 'pipe'});
  execFileSync(strata, ['export', job, '-o', out], {stdio: 'pipe'});
  const file = JSON.parse(fs.readFileSync(out, 'utf8'));
  const events = file.traceEvents;

  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events, {metadata: {}});
  const data = model.parsedTrace().data;

  const warnings = [...data.Warnings.perWarning.keys()];
  check('imported with no warnings', warnings.length === 0, warnings.join(', '));

  const names = new Map([...data.Meta.processNames].map(([pid, ev]) => [pid, ev.args.name]));
  const want = [0, 1, 2, 3, 4, 5, 6, 7];
  check('one process per rank, named by rank', names.size === 8 && want.every(r => names.get(r) === `rank ${r}`),
        JSON.stringify([...names]));

  // Every slice ("X") and instant ("I") of the file is an entry of its process, on a named thread.
  const processes = data.Renderer.processes;
  for (const r of want) {
    const inFile = events.filter(e => e.pid === r && (e.ph === 'X' || e.ph === 'I')).length;
    const proc = processes.get(r);
    const threads = proc ? [...proc.threads.values()] : [];
    const entries = threads.reduce((n, t) => n + t.entries.length, 0);
    const unnamed = threads.filter(t => t.entries.some(e => e.ph === 'X') && !t.name).length;
    check(`rank ${r}: all ${inFile} slices and instants imported, on named threads`,
          inFile > 1000 && entries === inFile && unnamed === 0, `${entries} imported, ${unnamed} unnamed threads`);
  }

  // The ranks' first step starts together once aligned (ProfilerStep#N slices as the engine placed them).
  const firstStep = want.map(r => {
    const steps = [...processes.get(r).threads.values()].flatMap(t => t.entries)
                      .filter(e => /^ProfilerStep#\d+$/.test(e.name)).sort((a, b) => a.ts - b.ts);
    return steps.length ? {name: steps[0].name, ts: steps[0].ts} : null;
  });
  const residual = file.otherData.clock_residual_us, offsets = Object.values(file.otherData.clock_offsets_us);
  const spread = firstStep.every(Boolean) ? Math.max(...firstStep.map(s => s.ts)) - Math.min(...firstStep.map(s => s.ts)) : NaN;
  check('the ranks\' first step starts together (within the reported clock residual)',
        firstStep.every(s => s && s.name === firstStep[0].name) && spread <= residual + 0.002 &&
            Math.max(...offsets) - Math.min(...offsets) > 100,
        `first steps ${JSON.stringify(firstStep)}, spread ${spread} µs, residual ${residual} µs`);

  const instants = [...processes.get(5).threads.values()].flatMap(t => t.entries).filter(e => e.cat === 'strata.finding');
  check('the finding is an instant on the straggler (rank 5)', instants.length === 1 && instants[0].args.cause === 'slow_compute',
        JSON.stringify(instants.map(e => [e.name, e.pid])));
} catch (e) {
  check('export and import', false, e.stack || String(e));
} finally {
  fs.rmSync(tmp, {recursive: true, force: true});
}
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed ? 1 : 0);

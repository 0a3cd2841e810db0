#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a lava-run log into result lines of the workbench.

    results.py LOG OUTDIR PROGRAM...

LOG is what lava-run printed (one log record a line: {"dt", "lvl", "msg"}).
Writes OUTDIR/results.yaml (LAVA's results, as the server would list
them) and OUTDIR/console.log (the serial console), and prints, tab
separated, STATUS NAME DETAIL lines:

  lava:SUITE:SET.CASE   every test case of a test definition (SUITE is its
                        name, SET the kselftest program); a skip carries
                        the reason the test definition logged for it, a
                        skip without one fails
  lava:SUITE:PROG       the program's own result (kselftest's runner); a
                        pass without a passing case is a SKIP with its
                        cases' reasons (kselftest's harness exits 0 when
                        every case skips), or a FAIL when it reported no
                        case or a case skipped without a reason
  lava:SUITE:run        the test definition ran to its end
  lava:job              LAVA's verdict on the job (infrastructure, timeouts)
  lava:action:NAME      every LAVA action that failed
  lava:console          the console has the kernel banner and no splat
  lava:splat            each distinct kernel splat (Oops, BUG, WARNING,
                        lockdep, KASAN ...: scripts/vm/results.py's list)

Each PROGRAM (a kselftest program the job was to run) must have a result.
"""

import json
import os
import re
import sys

import yaml



def vm_results():
    """scripts/vm/results.py: one list of what a splat is (SPLATS), one
    rule for a program that exited 0 (exited0_verdict)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'vm', 'results.py')
    spec = importlib.util.spec_from_file_location('vm_results', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VM = vm_results()
SPLATS = VM.SPLATS

# A printk timestamp, where the kernel's line starts (on a console shared
# with user space it need not be at the start of a serial line).
PRINTK = re.compile(r'\[\s*\d+\.\d+\]\s?')
SKIP_NOTE = re.compile(r'kfd-kselftest: skip (\S+): (.*)$')
FAIL_NOTE = re.compile(r'kfd-kselftest: fail (\S+): (.*)$')
# A run of a test definition in LAVA's own results: "0_kfd-kselftest".
RUN = re.compile(r'^(\d+)_(.+)$')


def out(status, name, detail=''):
    detail = ' '.join(str(detail).split())
    print(f'{status}\t{name}\t{detail}')


def records(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.strip()
            if line.startswith('- '):
                line = line[2:]
            if not line.startswith('{'):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                try:
                    rec = yaml.safe_load(line)
                except yaml.YAMLError:
                    continue
            if isinstance(rec, dict) and 'lvl' in rec:
                yield rec


def main():
    log, outdir, programs = sys.argv[1], sys.argv[2], sys.argv[3:]
    results, console = [], []
    try:
        for rec in records(log):
            if rec['lvl'] == 'results' and isinstance(rec.get('msg'), dict):
                results.append(rec['msg'])
            elif rec['lvl'] == 'target':
                console.append(str(rec.get('msg', '')))
    except FileNotFoundError:
        out('FAIL', 'lava:job', f'no lava-run log {log}')
        return
    with open(os.path.join(outdir, 'results.yaml'), 'w', encoding='utf-8') as f:
        yaml.safe_dump(results, f, sort_keys=False)
    with open(os.path.join(outdir, 'console.log'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(console) + '\n')

    reasons, failures = {}, {}
    for line in console:
        m = PRINTK.search(line)
        text = line[m.end():] if m else line
        m = SKIP_NOTE.search(text)
        if m:
            reasons[m.group(1)] = m.group(2).strip()
        m = FAIL_NOTE.search(text)
        if m:
            failures[m.group(1)] = m.group(2).strip()

    job = None
    runs = {}
    cases = {}
    tests = []
    # The cases of each program (a test set), to judge the program's own
    # result: {(suite, set): [(case, result), ...]}.
    sets = {}
    for r in results:
        definition, case, result = r.get('definition', ''), str(r.get('case', '')), r.get('result')
        if definition == 'lava':
            if case == 'job':
                job = r
            elif RUN.match(case):
                runs[RUN.match(case).group(2)] = r
            elif result == 'fail':
                extra = r.get('extra') if isinstance(r.get('extra'), dict) else {}
                out('FAIL', f'lava:action:{case}', r.get('error_msg') or extra.get('fail') or 'failed')
            continue
        m = RUN.match(definition)
        suite = m.group(2) if m else definition
        name = f'{r["set"]}.{case}' if r.get('set') else case
        cases.setdefault(suite, set()).add(name)
        tests.append((suite, r.get('set'), case, name, result))
        if r.get('set'):
            sets.setdefault((suite, r['set']), []).append((name, result))

    for suite, tset, case, name, result in tests:
        members = None if tset else sets.get((suite, case))
        if result == 'pass' and not tset and (name in programs or members is not None):
            # A program that passed: the VM's rule (exited0_verdict).
            status, detail = VM.exited0_verdict([
                ({'pass': 'PASS', 'skip': 'SKIP'}.get(res, 'FAIL'), n, reasons.get(n, '') if res == 'skip' else '')
                for n, res in members or []])
            out(status, f'lava:{suite}:{name}', (not members and failures.get(name)) or detail)
        elif result == 'pass':
            out('PASS', f'lava:{suite}:{name}')
        elif result == 'skip':
            reason = reasons.get(name)
            if reason:
                out('SKIP', f'lava:{suite}:{name}', reason)
            else:
                out('FAIL', f'lava:{suite}:{name}',
                    'skipped without a reason in the log (no "kfd-kselftest: skip" line: '
                    'a bare SKIP, or a program that exited with KSFT_SKIP without saying why)')
        else:
            out('FAIL', f'lava:{suite}:{name}', failures.get(name) or f'result {result}')

    for suite, r in runs.items():
        if r.get('result') == 'pass':
            out('PASS', f'lava:{suite}:run', f'ran to its end in {r.get("duration", "?")}s')
        else:
            out('FAIL', f'lava:{suite}:run', r.get('error_msg') or 'did not finish (LAVA marked it failed)')
    suites = list(cases) or list(runs) or ['kfd-kselftest']
    for prog in programs:
        if not any(prog in c for c in cases.values()):
            out('FAIL', f'lava:{suites[0]}:{prog}', 'no result: the program did not run or was not reported')

    if job is None:
        out('FAIL', 'lava:job', 'lava-run reported no job result (killed?)')
    elif job.get('result') == 'pass':
        out('PASS', 'lava:job', 'LAVA: job finished correctly')
    else:
        out('FAIL', 'lava:job', f'{job.get("error_type", "")}: {job.get("error_msg", "")}')

    seen = {}
    banner = False
    for line in console:
        m = PRINTK.search(line)
        if not m:
            continue
        text = line[m.end():]
        banner = banner or 'Linux version ' in line
        if 'LAVA_SIGNAL' in text or text.startswith('kfd-kselftest:'):
            continue
        if any(p.search(text) for p in SPLATS):
            key = re.sub(r'(CPU: \d+|PID: \d+|\S+/\d+|0x[0-9a-f]+|\b[0-9a-f]{8,}\b)', '', text)
            seen.setdefault(key, [text, 0])[1] += 1
    if not banner:
        out('FAIL', 'lava:console',
            'no kernel banner with a printk timestamp in the console log: the kernel did not boot, '
            'or printk.time=1 is missing (the splat check reads the timestamped lines)')
    elif not seen:
        out('PASS', 'lava:console', f'no kernel splat in {len(console)} console lines')
    for text, n in seen.values():
        out('FAIL', 'lava:splat', f'{n}x {text}')


if __name__ == '__main__':
    main()

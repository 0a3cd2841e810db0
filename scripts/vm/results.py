#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the test VM's logs into test cases.

    results.py TREE PLAN RESULTS_LOG CONSOLE_LOG

TREE is the kernel work tree (its tools/testing/kunit parser reads the
KTAP and kselftest TAP output), PLAN the guest's plan (KIND NAME TIMEOUT
... lines, scripts/vm/run.sh writes it), RESULTS_LOG what
the guest wrote to its second serial port, CONSOLE_LOG the kernel console.

Prints one line per test case, tab separated: STATUS, NAME, DETAIL, with
STATUS one of PASS, FAIL, SKIP.  Every plan entry must have produced a
complete block of results; a block that is missing, unfinished or holds
no test case is a failure, and so is a step the guest had to kill at its
timeout.  Every kernel splat in the console log is a failure too.
"""

import re
import sys

BEGIN = re.compile(r'^KSERIES-BEGIN (\S+) (\S+)$')
END = re.compile(r'^KSERIES-END (\S+) (\S+) rc=(\d+)$')

# What counts as a kernel splat in the console log.
SPLATS = [
    re.compile(p) for p in (
        r'\bBUG: ',                      # BUG: KASAN, sleeping in atomic, NULL deref ...
        r'\bkernel BUG at ',
        r'\bOops\b',
        r'\bWARNING: ',                  # WARN*() and lockdep reports
        r'\bgeneral protection fault\b',
        r'\bUnable to handle kernel\b',
        r'\bKernel panic\b',
        r'\bINFO: task .* blocked for more than\b',
        r'\brcu: INFO: .* detected stalls?\b',
        r'\bUBSAN: ',
        r'\binconsistent lock state\b',
        r'\bpossible (circular|recursive) locking\b',
    )
]
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s*')


def out(status, name, detail=''):
    detail = ' '.join(detail.split())
    print(f'{status}\t{name}\t{detail}')


def read_plan(path):
    plan = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            words = line.split()
            if len(words) >= 3 and words[0] in ('kunit', 'kselftest', 'run'):
                plan.append((words[0], words[1], int(words[2])))
    return plan


def read_excluded(path):
    """The plan's "exclude DIR PROG TEST REASON..." lines."""
    excluded = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            words = line.split()
            if len(words) >= 5 and words[0] == 'exclude':
                excluded.append((words[2], words[3], ' '.join(words[4:])))
    return excluded


def read_blocks(path):
    """(kind, name) -> (lines, rc or None if unfinished), and whether DONE
    (or the KSERIES-ABORT line: the guest stopped its plan)."""
    blocks, cur, done = {}, None, False
    try:
        f = open(path, encoding='utf-8', errors='replace')
    except FileNotFoundError:
        return blocks, False
    with f:
        for raw in f:
            line = raw.rstrip('\r\n')
            m = BEGIN.match(line)
            if m:
                cur = (m.group(1), m.group(2))
                blocks[cur] = ([], None)
                continue
            m = END.match(line)
            if m and cur == (m.group(1), m.group(2)):
                blocks[cur] = (blocks[cur][0], int(m.group(3)))
                cur = None
                continue
            if line == 'KSERIES-DONE':
                done = True
                continue
            if line.startswith('KSERIES-ABORT '):
                done = line
                continue
            if cur:
                blocks[cur][0].append(line)
    return blocks, done


def leaves(test, prefix):
    if not test.subtests:
        yield prefix, test
        return
    for sub in test.subtests:
        name = sub.name or '?'
        yield from leaves(sub, f'{prefix}.{name}' if prefix else name)


RUNNER_HDR = re.compile(r'^# selftests: \S+: (\S+)$')
RUNNER_RES = re.compile(r'^((?:not )?ok) \d+ selftests: \S+: (\S+)\s*(?:#\s*(.*))?$')
TAP_RES = re.compile(r'^(?:not )?ok \d+')


def runner_programs(lines):
    """run_kselftest.sh's output: for each program, its name, its own TAP
    (which the runner prints prefixed with "# "), and the runner's result
    ("ok"/"not ok", directive), None when there was none."""
    progs, cur = [], None
    for line in lines:
        m = RUNNER_HDR.match(line)
        if m:
            cur = [m[1], [], None]
            progs.append(cur)
            continue
        m = RUNNER_RES.match(line)
        if m and cur and m[2] == cur[0]:
            cur[2] = (m[1], (m[3] or '').strip())
            cur = None
        elif cur and (line.startswith('# ') or line == '#'):
            cur[1].append(line[2:])
    return progs


def program_verdict(tap, result, cases):
    """A program of the runner judged as the LAVA job judges it
    (labs/lava/testdefs/kfd-kselftest.sh, then exited0_verdict), from its
    TAP, the runner's result and its parsed cases: (STATUS, DETAIL)."""
    plan = next((m for m in map(re.compile(r'^1\.\.(\d+)').match, tap) if m), None)
    skipall = re.match(r'^1\.\.0\s*#\s*SKIP\s*(.*)$', plan.string if plan else '', re.I)
    reason = skipall[1].strip() if skipall else ''
    seen = sum(1 for l in tap if TAP_RES.match(l))
    if result is None:
        return 'FAIL', 'no result from run_kselftest.sh (it stopped in the program)'
    ok, directive = result
    if directive.upper().startswith('SKIP'):
        return ('SKIP', reason) if reason else ('FAIL', 'skipped without a reason (no "1..0 # SKIP reason")')
    if ok != 'ok':
        return 'FAIL', f'run_kselftest.sh: not ok # {directive}' if directive else 'run_kselftest.sh: not ok'
    if plan is None:
        return 'FAIL', 'exited 0 without a TAP plan (1..N): it printed no test result'
    if skipall:
        return ('SKIP', reason) if reason else ('FAIL', 'skipped as a whole without a reason')
    if seen != int(plan[1]):
        return 'FAIL', f'exited 0 after {seen} of its {plan[1]} planned results'
    return exited0_verdict(cases)


def exited0_verdict(cases):
    """A kselftest program that exited 0, judged by its cases, (STATUS,
    NAME, REASON) each: kselftest's harness exits 0 when every case skips,
    so the exit is only worth a passing case.  The VM and the LAVA job
    (scripts/lava/results.py) judge by this one rule."""
    if not cases:
        return 'FAIL', 'passed without reporting a single test case'
    failed = [n for s, n, _ in cases if s == 'FAIL']
    if failed:
        return 'FAIL', f'exited 0, but a case failed: {", ".join(failed)}'
    passed = sum(s == 'PASS' for s, _, _ in cases)
    if passed:
        return 'PASS', f'{passed} of {len(cases)} cases passed'
    if all(r for _, _, r in cases):
        return 'SKIP', (f'exited 0, but all its {len(cases)} cases skipped: '
                        f'{"; ".join(sorted({r for _, _, r in cases}))}')
    return 'FAIL', 'exited 0 without a passing case: ' + ', '.join(
        f'{n} skipped without a reason' for _, n, r in cases if not r)


def tap_chunks(lines):
    """Split a block into its (K)TAP documents (one per KUnit suite)."""
    chunk = []
    for line in lines:
        if re.match(r'^\s*(K?TAP version \d+)', line) and chunk and \
                not re.match(r'^\s', line):
            yield chunk
            chunk = []
        chunk.append(line)
    if chunk:
        yield chunk


def parse_tap(kparser, printer, prefix, lines, named_only=False):
    """The (K)TAP documents of LINES, each leaf a case named PREFIX + its
    path; NAMED_ONLY: not the parser's placeholders for missing results
    (the runner's verdict on the program counts them)."""
    cases = []
    for chunk in tap_chunks(lines):
        if not any(re.match(r'^\s*K?TAP version', l) for l in chunk):
            continue
        test = kparser.parse_run_tests(chunk, printer)
        for lname, leaf in leaves(test, ''):
            if named_only and (not lname or '?' in lname.split('.')):
                continue
            status = {
                kparser.TestStatus.SUCCESS: 'PASS',
                kparser.TestStatus.SKIPPED: 'SKIP',
            }.get(leaf.status, 'FAIL')
            detail = leaf.skip_reason if status == 'SKIP' else ''
            if status == 'FAIL':
                detail = str(leaf.status.name).lower()
            cases.append((status, f'{prefix}{lname}', detail))
    return cases


def parse_block(kparser, printer, kind, name, lines, rc):
    progs = runner_programs(lines) if kind == 'kselftest' else []
    if not progs:
        return parse_tap(kparser, printer, f'{kind}:{name}:', lines)
    # run_kselftest.sh: each program's TAP on its own (a bare plan gets
    # the version line the parser needs), its cases named PROG.CASE, and
    # the program itself a result, as in LAVA.
    cases = []
    for prog, tap, result in progs:
        if tap and not any(re.match(r'^K?TAP version', l) for l in tap):
            tap = ['TAP version 13'] + tap
        inner = parse_tap(kparser, printer, f'{kind}:{name}:{prog}.', tap, named_only=True)
        status, detail = program_verdict(tap, result, inner)
        cases += inner + [(status, f'{kind}:{name}:{prog}', detail)]
    return cases


# run_kselftest.sh output of one program "p" (its own TAP, the runner's
# result) that must get this verdict, as the LAVA job gives it: --self-test.
V = 'TAP version 13'
RUNNER_FIXTURES = [
    ('all planned results', [V, '1..2', 'ok 1 a', 'ok 2 b'], 'ok', 'PASS'),
    ('fewer results than planned', [V, '1..3', 'ok 1 a', 'ok 2 b'], 'ok', 'FAIL'),
    ('more results than planned', [V, '1..1', 'ok 1 a', 'not ok 2 b'], 'ok', 'FAIL'),
    ('skipped as a whole, with its reason', [V, '1..0 # SKIP no gpu'], 'ok # SKIP', 'SKIP'),
    ('skipped as a whole without a reason, exit 0', [V, '1..0 # SKIP'], 'ok', 'FAIL'),
    ('a bare skip', [], 'ok # SKIP', 'FAIL'),
    ('no case at all, exit 0', [V, '1..0'], 'ok', 'FAIL'),
    ('every case skipped with its reason, exit 0', [V, '1..2', 'ok 1 a # SKIP no gpu', 'ok 2 b # SKIP no gpu'],
     'ok', 'SKIP'),
    ('no case passed, one skipped without a reason', [V, '1..1', 'ok 1 a # SKIP'], 'ok', 'FAIL'),
    ('a failed case without the TAP version line, exit 0', ['1..2', 'ok 1 a', 'not ok 2 b'], 'ok', 'FAIL'),
    ('a runner header in the program\'s own output', [V, '1..1', '# selftests: x: y', 'ok 1 a'], 'ok', 'PASS'),
    ('timed out after all its results', [V, '1..1', 'ok 1 a'], 'not ok # TIMEOUT 120 seconds', 'FAIL'),
    ('results without a plan', ['ok 1 a'], 'ok', 'FAIL'),
    ('nothing printed', [], 'ok', 'FAIL'),
]


def self_test(kparser, printer):
    bad = []
    for what, tap, result, want in RUNNER_FIXTURES:
        ok, _, directive = result.partition(' # ')
        lines = ['TAP version 13', '1..1', '# selftests: d: p'] + [f'# {l}' for l in tap] + \
            [f'{ok} 1 selftests: d: p' + (f' # {directive}' if directive else '')]
        got = [c for c in parse_block(kparser, printer, 'kselftest', 'k', lines, 0) if c[1] == 'kselftest:k:p']
        if [c[0] for c in got] != [want]:
            bad.append(f'{what}: {got or "no verdict"}, not {want}')
    print('\n'.join(bad) or f'{len(RUNNER_FIXTURES)} run_kselftest.sh outputs judged as the LAVA job judges them')
    return 1 if bad else 0


def main():
    if sys.argv[1:2] == ['--self-test']:
        sys.path.insert(0, f'{sys.argv[2]}/tools/testing/kunit')
        import kunit_parser
        import kunit_printer
        return self_test(kunit_parser, kunit_printer.null_printer)
    tree, plan_path, results_path, console_path = sys.argv[1:5]
    sys.path.insert(0, f'{tree}/tools/testing/kunit')
    import kunit_parser as kparser
    import kunit_printer
    printer = kunit_printer.null_printer

    plan = read_plan(plan_path)
    for prog, test, reason in read_excluded(plan_path):
        out('SKIP', f'kselftest:{prog}:{test}', f'not run (vm.plan): {reason}')
    blocks, done = read_blocks(results_path)

    for kind, name, timeout in plan:
        key = (kind, name)
        if key not in blocks:
            out('FAIL', f'{kind}:{name}', 'did not run (the VM stopped before it)')
            continue
        lines, rc = blocks[key]
        tail = ' | '.join(l for l in lines if l.strip())[-300:]
        if rc is None:
            out('FAIL', f'{kind}:{name}', 'did not finish (the VM stopped in it)')
        elif rc == 124:
            out('FAIL', f'{kind}:{name}', f'timed out after {timeout}s (vm.plan): {tail}')
        if kind == 'run':
            if rc is not None and rc != 124:
                out('PASS' if rc == 0 else 'FAIL', f'run:{name}',
                    '' if rc == 0 else f'exit status {rc}: {tail}')
            continue
        cases = parse_block(kparser, printer, kind, name, lines, rc)
        for c in cases:
            out(*c)
        diag = ' | '.join(l for l in lines if l.startswith('#'))[-300:]
        if rc == 124:
            continue
        if kind == 'kunit' and rc not in (None, 0):
            out('FAIL', f'kunit:{name}', f'module load failed (status {rc}): {tail}')
        elif kind == 'kselftest' and rc == 4 and not cases:
            out('SKIP', f'kselftest:{name}', diag or 'skipped')
        elif kind == 'kselftest' and rc not in (None, 0, 4) and \
                not any(c[0] == 'FAIL' for c in cases):
            out('FAIL', f'kselftest:{name}', f'exit status {rc}')
        elif not cases and rc is not None and not (kind == 'kselftest' and rc == 4):
            out('FAIL', f'{kind}:{name}', f'no test results ({diag})')

    if isinstance(done, str):
        words = done.split(None, 3) + ['?', '?']
        out('FAIL', 'vm:plan', f'the guest stopped its plan after {words[1]}:{words[2]}, '
            f'which could not be killed: {words[3] if words[3] != "?" else ""}')
    elif not done:
        out('FAIL', 'vm:plan', 'the VM did not reach the end of its plan')

    seen = {}
    banner = end = False
    try:
        with open(console_path, encoding='utf-8', errors='replace') as f:
            for raw in f:
                line = TIMESTAMP.sub('', raw.strip())
                banner = banner or line.startswith('Linux version ')
                end = end or line == 'kseries: plan done'
                if any(p.search(line) for p in SPLATS):
                    # One case per distinct splat: the same splat on
                    # another CPU, task or address is the same case.
                    key = re.sub(r'(CPU: \d+|PID: \d+|\S+/\d+|0x[0-9a-f]+|'
                                 r'\b[0-9a-f]{8,}\b)', '', line)
                    seen.setdefault(key, [line, 0])[1] += 1
    except FileNotFoundError:
        out('FAIL', 'vm:console', 'no console log')
        return
    if not banner or not end:
        out('FAIL', 'vm:console',
            'the console log lacks the kernel banner' if not banner else
            'the console log ends before the plan did (splats after that are unseen)')
    elif not seen:
        out('PASS', 'vm:console', 'no kernel splat')
    for key, (line, n) in seen.items():
        out('FAIL', 'vm:splat', f'{n}x {line}')


if __name__ == '__main__':
    sys.exit(main())

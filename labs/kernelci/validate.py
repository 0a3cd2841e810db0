#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check what is ours in labs/kernelci/kfd.yaml, offline.

    validate.py --tree KERNEL_TREE [--self-test]   check it
    validate.py --write                            regenerate its fragments

  yaml        it loads; only kernelci-pipeline's sections (trees,
              build_configs, fragments, jobs, scheduler)
  fragments   generated from tools-testing-selftests/NAME.config (--write);
              every option is a symbol of the tree's Kconfig
  names       build configs and job rules name our trees; a kbuild's
              fragments are ours, upstream's (UPSTREAM_FRAGMENTS) or a
              CONFIG_ line, kfd before x86-board; scheduler entries name
              our jobs, test jobs the event of our kbuild; platforms are
              the AMD Chromebooks of labs/lava/testdefs/kfd-kselftest.yaml,
              and kselftest-kfd runs on all of them
  LAVA jobs   labs/lava/jobs/: our test definition's path exists; the
              collections given to kselftest's runner exist in the tree,
              and no TEST_GEN_PROGS_EXTENDED program is named to it
  kselftests  each collection is a directory of the tree with a Makefile;
              a job of the "kselftest" method (run_kselftest.sh) names no
              TEST_GEN_PROGS_EXTENDED program (it would silently not
              run); the kbuild's fragments have what each collection's
              "config" file asks for

Whether kernelci-pipeline's own rules schedule the jobs is not checked
here: that needs its configuration, which changes upstream
(labs/README.md, "Proposing the KernelCI part upstream").
--self-test also checks that broken copies are rejected, each for its
own reason.
"""

import argparse
import glob
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONFIGS = os.path.join(REPO, 'tools-testing-selftests')
TESTDEF = os.path.join(REPO, 'labs', 'lava', 'testdefs', 'kfd-kselftest.yaml')
SECTIONS = {'trees', 'build_configs', 'fragments', 'jobs', 'scheduler'}
UPSTREAM_FRAGMENTS = {'lab-setup', 'x86-board'}
FRAGMENTS = re.compile(r'^fragments:\n(?:(?:[ #].*)?\n)*', re.M)


def config_lines(path):
    with open(path, encoding='utf-8') as f:
        return [l.strip() for l in f if l.startswith('CONFIG_')]


def fragments_text(configs):
    """The fragments: section as --write writes it."""
    out = ['fragments:', '  # Generated from tools-testing-selftests/NAME.config by',
           '  # labs/kernelci/validate.py --write: edit those files, not this.']
    paths = sorted(glob.glob(os.path.join(configs, '*.config')),
                   key=lambda p: (os.path.basename(p) != 'kfd.config', p))
    for path in paths:
        name = os.path.basename(path)[:-len('.config')]
        out += [f'  {name}:', f'    path: "kernel/configs/{name}.config"', '    configs:']
        out += [f"      - '{l}'" for l in config_lines(path)]
    return '\n'.join(out) + '\n\n'


def makefile_vars(path):
    """VAR -> words of a selftests Makefile (+=, :=, =; continuations)."""
    with open(path, encoding='utf-8') as f:
        text = f.read().replace('\\\n', ' ')
    found = {}
    for m in re.finditer(r'^(TEST_\w+)\s*[+:]?=(.*)$', text, re.M):
        found.setdefault(m.group(1), []).extend(m.group(2).split())
    return found


def collection_vars(tree, col):
    """The TEST_ variables of kselftest collection COL of TREE (its
    Makefile's), or None when TREE has no such collection."""
    mk = os.path.join(tree, 'tools/testing/selftests', col, 'Makefile')
    return makefile_vars(mk) if os.path.isfile(mk) else None


def check(text, tree, configs, testdef):
    errors = []
    try:
        cfg = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f'kfd.yaml does not load: {e}']
    if not isinstance(cfg, dict) or set(cfg) - SECTIONS:
        return [f'kfd.yaml: sections other than {", ".join(sorted(SECTIONS))}']
    m = FRAGMENTS.search(text)
    if not m or m.group(0).rstrip() != fragments_text(configs).rstrip():
        errors.append('fragments: not what tools-testing-selftests/*.config generate (validate.py --write)')
    trees, jobs = cfg.get('trees') or {}, cfg.get('jobs') or {}
    frags = {n: {l.split('=')[0] for l in f.get('configs', [])} for n, f in (cfg.get('fragments') or {}).items()}
    if tree:
        symbols = set()
        for k in glob.glob(os.path.join(tree, '**', 'Kconfig*'), recursive=True):
            with open(k, encoding='utf-8', errors='replace') as f:
                symbols.update(re.findall(r'^\s*(?:menu)?config\s+(\w+)', f.read(), re.M))
        for n, opts in frags.items():
            errors += [f'fragment {n}: {o} is not in the Kconfig of {tree}' for o in sorted(opts)
                       if o[len('CONFIG_'):] not in symbols]
    for n, b in (cfg.get('build_configs') or {}).items():
        if b.get('tree') not in trees:
            errors.append(f'build config {n}: tree {b.get("tree")} is not defined')
    kbuild_opts = {}
    for n, j in jobs.items():
        errors += [f'job {n}: rules name tree {t}, not defined' for t in (j.get('rules') or {}).get('tree', [])
                   if t not in trees]
        p = j.get('params') or {}
        if j.get('kind') == 'kbuild':
            fl = p.get('fragments', [])
            for f in fl:
                if f not in frags and f not in UPSTREAM_FRAGMENTS and not f.startswith('CONFIG_'):
                    errors.append(f'job {n}: fragment {f} is neither ours nor upstream\'s')
            if 'kfd' not in fl or 'x86-board' in fl and fl.index('kfd') > fl.index('x86-board'):
                errors.append(f'job {n}: the kfd fragment must come before x86-board')
            kbuild_opts[n] = set().union(*(frags.get(f, set()) for f in fl))
    have = set().union(*kbuild_opts.values())
    for n, j in jobs.items():
        p = j.get('params') or {}
        for col in str(p.get('collections', '')).split() if tree else []:
            v = collection_vars(tree, col)
            if v is None:
                errors.append(f'job {n}: collection {col} is not in {tree}')
                continue
            names = str(p.get('tests', '')).split()
            for t in names:
                prog = t.split(':')[-1]
                if prog not in sum(v.values(), []):
                    errors.append(f'job {n}: {t} is no program of {col}')
                elif p.get('test_method') == 'kselftest' and prog in v.get('TEST_GEN_PROGS_EXTENDED', []):
                    errors.append(f'job {n}: {t} is TEST_GEN_PROGS_EXTENDED: run_kselftest.sh never runs it')
            config = os.path.join(tree, 'tools/testing/selftests', col, 'config')
            need = config_lines(config) if os.path.exists(config) else []
            errors += [f'job {n}: {col}/config asks for {o}, no fragment of the kbuild has it'
                       for o in sorted({x.split('=')[0] for x in need}) if o not in have]
    with open(testdef, encoding='utf-8') as f:
        platforms = set(yaml.safe_load(f)['metadata']['devices']) - {'qemu'}
    for e in cfg.get('scheduler') or []:
        n, ev = e.get('job'), e.get('event') or {}
        if n not in jobs:
            errors.append(f'scheduler: job {n} is not defined')
            continue
        if jobs[n].get('kind') == 'kbuild':
            if ev.get('kind') != 'checkout':
                errors.append(f'scheduler: kbuild {n} not on a checkout event')
            continue
        if ev.get('kind') != 'kbuild' or (jobs.get(ev.get('name')) or {}).get('kind') != 'kbuild':
            errors.append(f'scheduler: {n} not on the event of a kbuild job of ours')
        plats = set(e.get('platforms') or [])
        errors += [f'scheduler: {n} on {p}, not an AMD Chromebook of {os.path.basename(testdef)}'
                   for p in sorted(plats - platforms)]
        if n == 'kselftest-kfd' and platforms - plats:
            errors.append(f'scheduler: kselftest-kfd not on {", ".join(sorted(platforms - plats))}')
    return errors


def check_lava(jobs, tree):
    """Our LAVA jobs (name -> text): our test definition's path exists;
    the collections they give kselftest's runner (COLLECTION,
    TST_CMDFILES) exist in the tree, and the programs they name to it
    (TST_CASENAME) are ones it runs, not TEST_GEN_PROGS_EXTENDED."""
    errors = []
    for name, text in sorted(jobs.items()):
        for action in yaml.safe_load(text).get('actions', []):
            for d in (action.get('test') or {}).get('definitions', []):
                p = d.get('parameters') or {}
                if str(d.get('repository', '')).endswith('testdefs.git') and \
                        not os.path.isfile(os.path.join(REPO, d.get('path', ''))):
                    errors.append(f'LAVA job {name}: no test definition {d.get("path")} here')
                if not tree:
                    continue
                # Collections (COLLECTION, TST_CMDFILES) and COLLECTION:PROG
                # tests (TST_CASENAME: run_kselftest.sh -t) for the runner.
                named = [(c, None) for c in str(p.get('COLLECTION', '') or p.get('TST_CMDFILES', '')).split()]
                named += [tuple(c.rpartition(':')[::2]) for c in str(p.get('TST_CASENAME', '')).split()]
                for col, prog in named:
                    v = collection_vars(tree, col)
                    if v is None:
                        errors.append(f'LAVA job {name}: collection {col or "(none)"} is not in {tree}')
                    elif prog and prog in v.get('TEST_GEN_PROGS_EXTENDED', []):
                        errors.append(f'LAVA job {name}: {col}:{prog} is TEST_GEN_PROGS_EXTENDED: '
                                      'run_kselftest.sh never runs it')
    return errors


def lava_jobs():
    jobs = {}
    for path in glob.glob(os.path.join(REPO, 'labs', 'lava', 'jobs', '*.yaml')):
        with open(path, encoding='utf-8') as f:
            jobs[os.path.basename(path)] = f.read()
    return jobs


# (what, old text, new text, the error it must cause)
BROKEN = [
    ('an undefined job scheduled', '  - job: kselftest-kfd\n', '  - job: kselftest-kfdd\n', 'not defined'),
    ('a tree typo', '    tree: kseries\n', '    tree: kserie\n', 'tree kserie'),
    ('a fragment edited here', "      - 'CONFIG_HSA_AMD=y'\n", '', 'validate.py --write'),
    ('an unknown collection', 'collections: drivers/gpu/amdkfd\n', 'collections: drivers/gpu/amdkfdx\n',
     'not in'),
    ('an opt-in test through run_kselftest.sh', 'test_method: kselftest-program',
     'test_method: kselftest', 'TEST_GEN_PROGS_EXTENDED'),
    ('grunt', '      - asus-CM1400CXA-dalboz\n', '      - acer-R721T-grunt\n', 'not an AMD Chromebook'),
    ('a LAVA job on an unknown collection', 'TST_CMDFILES: drivers/gpu/amdkfd\n',
     'TST_CMDFILES: drivers/gpu/amdkfdx\n', 'LAVA job chromebook-amd-kfd-kselftest.yaml: collection'),
    ('a LAVA job naming an opt-in test to the runner', 'TST_CMDFILES: drivers/gpu/amdkfd\n',
     'TST_CMDFILES: drivers/gpu/amdkfd\n        TST_CASENAME: drivers/gpu/amdkfd:kfd_queue_hang\n',
     'TEST_GEN_PROGS_EXTENDED'),
    ('a LAVA job on a test definition we do not have', 'path: labs/lava/testdefs/kfd-kselftest.yaml',
     'path: labs/lava/testdefs/kfd-selftest.yaml', 'no test definition'),
    ('kfd after x86-board', '        - kfd\n        - amdgpu-kcq-reset\n        - x86-board\n',
     '        - x86-board\n        - kfd\n', 'before x86-board'),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tree', help='the kernel tree with the series')
    ap.add_argument('--config', default=os.path.join(HERE, 'kfd.yaml'))
    ap.add_argument('--write', action='store_true', help='regenerate the fragments of --config')
    ap.add_argument('--self-test', action='store_true', help='also reject broken copies')
    args = ap.parse_args()
    with open(args.config, encoding='utf-8') as f:
        text = f.read()
    if args.write:
        new = FRAGMENTS.sub(lambda m: fragments_text(CONFIGS), text, count=1)
        with open(args.config, 'w', encoding='utf-8') as f:
            f.write(new)
        return 0
    jobs = lava_jobs()
    errors = check(text, args.tree, CONFIGS, TESTDEF) + check_lava(jobs, args.tree)
    for what, old, new, expect in BROKEN if args.self_test and not errors else []:
        job = next((n for n, j in sorted(jobs.items()) if old in j), None)
        if old not in text and not job:
            errors.append(f'self-test: cannot make the copy with {what}: no "{old.strip()}"')
            continue
        if job:
            got = check_lava(dict(jobs, **{job: jobs[job].replace(old, new, 1)}), args.tree)
        else:
            got = check(text.replace(old, new, 1), args.tree, CONFIGS, TESTDEF)
        if not any(expect in e for e in got):
            errors.append(f'self-test: the copy with {what} was not rejected for it: {"; ".join(got[:2]) or "accepted"}')
    for e in errors:
        print(f'error: {e}')
    if errors:
        return 1
    cfg = yaml.safe_load(text)
    print(f'{os.path.basename(args.config)}: valid: {len(cfg["jobs"])} jobs, {len(cfg["scheduler"])} scheduler '
          f'entries, fragments {", ".join(cfg["fragments"])} generated'
          + (f', in the Kconfig of {args.tree}' if args.tree else '')
          + f'; LAVA jobs {", ".join(sorted(jobs))}'
          + (f'; {len(BROKEN)} broken copies rejected' if args.self_test else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())

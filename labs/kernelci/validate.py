#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Offline check of labs/kernelci/kfd.yaml: what kernelci-pipeline needs of it.

    validate.py --tree KERNEL_TREE [--self-test] [--config kfd.yaml]
                [--upstream upstream.yaml] [--fragment kfd.config]
                [--lava-jobs DIR]

The other fragments of kfd.yaml are the NAME.config files beside
kfd.config (labs/config/).

kernelci-pipeline's own validator (tests/validate_yaml.py) is not
packaged; this checks the same kind of thing, and what is ours to get
right:

  sections      only kernelci-pipeline's (trees, build_configs, fragments,
                jobs, scheduler, ...), every one a mapping or list as there
  trees         each has an https URL; build configs name a defined tree
  fragments     path kernel/configs/NAME.config and CONFIG_ lines; each is
                labs/config/NAME.config line for line ("kfd" must be there),
                every option exists in the tree's Kconfig, and the kbuild's
                fragments have what the "config" file of each collection
                a job runs asks for
  jobs          kind, template, kcidb_test_suite, params as the config
                reference requires; generic.jinja2 jobs: a test_method
                of upstream.yaml (test_methods, test_method_change), one
                that runs kselftests (a runner) for a job with
                collections; kbuild: arch, compiler, fragments that
                exist (ours or upstream's), the kfd fragment before
                x86-board, kselftests built; kselftest jobs: the
                collection exists in the tree (a TARGETS of the selftests'
                Makefile, with a Makefile), each test is a program of it
                that the job's test method runs: a method that goes
                through run_kselftest.sh (upstream.yaml test_methods
                runner) runs only what run_tests runs (TEST_PROGS,
                TEST_GEN_PROGS, TEST_CUSTOM_PROGS), so a
                TEST_GEN_PROGS_EXTENDED program named there is an error
                (it would silently not run); a direct runner runs both;
                the opt-in reset tests (OPT_IN: kfd_queue_hang,
                amdgpu_kcq_pipe_reset) only alone, run directly as root,
                with their variable in env, their kernel arguments and a
                frequency, and no other job sets the variable; a job using
                a test method of upstream.yaml test_method_change is noted
                ("needs upstream test method"); rules name known trees
  scheduler     every entry names a defined job; kbuild jobs on checkout
                events, test jobs on the kbuild event of a defined kbuild
                job and a known runtime; platforms known to
                kernelci-pipeline (upstream.yaml), of the kbuild's arch,
                with an APU KFD supports (upstream.yaml kfd_support: not
                grunt, Stoney); the main kselftest job (the whole
                collection) on every such platform; an opt-in test's job
                only on a platform whose every GC can run it with the
                job's kernel arguments (OPT_IN gc); it may stay
                unscheduled
  kfd_support   checked against the tree's kfd_device.c: each supported GC
                version is a case there, the unsupported chip is not
  LAVA jobs     the device types of labs/lava/jobs/ are supported platforms;
                their kselftest programs as for KernelCI: named to Linaro's
                kselftest.yaml (TST_CASENAME, TST_CMDFILES) or to
                labs/lava/testdefs/kfd-kselftest.yaml (COLLECTION) they go
                through run_kselftest.sh, so no TEST_GEN_PROGS_EXTENDED
                program; run by path (./PROG) in an inline definition they
                run directly.  An opt-in test: run directly, alone, its
                variable set (on its command line or in the job's
                environment), in a root shell (every boot prompt ends in
                '#', no su/sudo/runuser/setpriv), its kernel arguments in
                the boot's extra_kernel_args, on a device type whose GC
                can run it, priority low and no failure_retry

--self-test also makes broken copies (an undefined job, grunt, a fragment
that is not labs/config/kfd.config, a collection not in the tree, a
test_method typo, an opt-in test through run_kselftest.sh in KernelCI and
in LAVA, without its variable or kernel argument, as another user, on a
GPU it cannot run on, ...) and fails unless each is rejected with its own error; and
copies that must be accepted (the opt-in jobs scheduled where they can
run); and checks the parser of the selftests' Makefiles on a fixture
tree.  Exit status 0 when valid; the notes ("needs upstream test
method: ...") are printed before the summary.

Not checked: whether kernelci-pipeline's platform rules let the jobs run
at all (they do not, until the pull request adds the series' branch to
them: labs/README.md).  That would mean re-implementing its scheduler
against a copy of its configuration that goes stale.
"""

import argparse
import glob
import os
import re
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CI = os.path.dirname(HERE)

SECTIONS = {'_anchors', 'trees', 'build_configs', 'fragments', 'jobs',
            'scheduler', 'platforms', 'runtimes'}
JOB_KINDS = {'kbuild', 'job', 'process', 'test'}
EVENT_KINDS = {'checkout', 'kbuild', 'job', 'test', 'process'}
CONFIG_LINE = re.compile(r'^(CONFIG_[A-Z0-9_]+)=(.+)$|^# (CONFIG_[A-Z0-9_]+) is not set$')
KFD_COLLECTION = 'drivers/gpu/amdkfd'
# amdgpu.debug_mask bits (amdgpu_drv.c): AMDGPU_DEBUG_ENABLE_EXP_RESETS,
# AMDGPU_DEBUG_DISABLE_GPU_RING_RESET.
EXP_RESETS = 0x20
NO_RING_RESET = 0x40
# The opt-in GPU reset tests, as their sources say (the comment at the top
# of each): TEST_GEN_PROGS_EXTENDED, so run_tests and run_kselftest.sh
# never run them; a lab runs the program directly, as root, with "env"
# set (they skip without it) and "args" on the kernel command line
# ("exp": amdgpu.debug_mask with bit 5, the experimental resets, and
# without bit 6, which disables ring resets).  "gc": the GC versions
# first <= GC < end they test, and whether there they also need bit 5.
OPT_IN = {
    'kfd_queue_hang': {
        'collection': KFD_COLLECTION,
        'env': 'KFD_QUEUE_HANG_ALLOW_RESET=1',
        'args': ['amdgpu.cwsr_enable=0'],
        'exp': False,
        # GFX 9 with the HWS (gfx_target_version 90000..90599); GFX 10.1
        # and 10.3 only with the experimental resets, which give them a
        # KFD queue reset.
        'gc': [((9, 0, 0), (9, 6, 0), False), ((10, 1, 0), (10, 4, 0), True)],
        'where': 'GFX 9 (GC 9.0 to 9.5), or GC 10.1/10.3 with amdgpu.debug_mask bit 5',
    },
    'amdgpu_kcq_pipe_reset': {
        'collection': 'drivers/gpu/amdgpu',
        'env': 'AMDGPU_KCQ_RESET_ALLOW_RESET=1',
        'args': [],
        'exp': True,
        # The GC versions with amdgpu's pipe step for KCQs.
        'gc': [((9, 0, 0), (9, 4, 3), False), ((10, 0, 0), (11, 0, 0), False)],
        'where': 'GC 9.0 to 9.4.2 or 10.x (the pipe step)',
    },
}
# The runners of test methods (upstream.yaml test_methods runner).
RUN_KSELFTEST = 'run_kselftest'
DIRECT = 'direct'
# Test definitions that run kselftest programs through run_kselftest.sh:
# Linaro's (TST_CMDFILES, TST_CASENAME) and ours (COLLECTION).
LINARO_KSELFTEST = 'automated/linux/kselftest/kselftest.yaml'
OUR_KSELFTEST = 'labs/lava/testdefs/kfd-kselftest.yaml'
# A program run by its path in a shell step, and what runs it as someone
# else.
PROG_RUN = re.compile(r'(?:^|[\s;&|(])(?:\./|/[^\s;&|()]*/)([A-Za-z0-9_.-]+)(?=$|[\s;&|)])')
OTHER_USER = re.compile(r'(?:^|[\s;&|(])(?:su|sudo|runuser|setpriv|chpst|doas)(?=$|[\s;&|)])')


_KCONFIG = {}


class Checker:
    def __init__(self, tree):
        self.tree = tree
        self.errors = []
        self.warnings = []
        self.notes = []
        self.facts = {}
        self.opt_in_jobs = {}
        self.main_jobs = set()
        self.used_collections = set()
        self.methods = {}
        self.fragment_files = {}

    def error(self, msg):
        self.errors.append(msg)

    def warn(self, msg):
        self.warnings.append(msg)

    # ------------------------------------------------------------ the tree
    def kconfig_symbols(self):
        """Every option the tree's Kconfig files define (read once)."""
        if self.tree not in _KCONFIG:
            syms = set()
            pat = re.compile(r'^\s*(?:menu)?config\s+([A-Z0-9_]+)\s*$')
            for root, dirs, files in os.walk(self.tree):
                dirs[:] = [d for d in dirs if not d.startswith('.') and d not in ('tools', 'Documentation', 'scripts', 'samples')]
                for f in files:
                    if f.startswith('Kconfig'):
                        with open(os.path.join(root, f), encoding='utf-8', errors='replace') as fh:
                            for line in fh:
                                m = pat.match(line)
                                if m:
                                    syms.add(m.group(1))
            _KCONFIG[self.tree] = syms
        return _KCONFIG[self.tree]

    def selftests(self):
        return os.path.join(self.tree, 'tools', 'testing', 'selftests')

    def collection_programs(self, collection):
        """The programs of a kselftest collection, or None if it is not one:
        {'run': what run_tests runs (and run_kselftest.sh, from the
        kselftest-list.txt that emit_tests writes), 'extended': what is
        built and installed but never run (lib.mk)}."""
        sel = self.selftests()
        with open(os.path.join(sel, 'Makefile'), encoding='utf-8', errors='replace') as f:
            targets = set()
            for line in f:
                m = re.match(r'^\s*TARGETS\s*\+?=\s*(.*)$', line)
                if m:
                    targets.update(m.group(1).split())
        mk = os.path.join(sel, collection, 'Makefile')
        if collection not in targets or not os.path.isfile(mk):
            return None
        progs = {'run': [], 'extended': []}
        with open(mk, encoding='utf-8', errors='replace') as f:
            text = f.read().replace('\\\n', ' ')
        for m in re.finditer(r'^\s*(TEST_(?:GEN_)?PROGS(?:_EXTENDED)?|TEST_CUSTOM_PROGS)\s*[:+?]?=\s*(.*)$',
                             text, re.M):
            kind = 'extended' if m.group(1).endswith('_EXTENDED') else 'run'
            progs[kind] += [os.path.basename(p) for p in m.group(2).split()]
        return progs

    def programs(self, collection):
        """collection_programs, once per collection; {} without a tree."""
        cache = self.facts.setdefault('programs', {})
        if collection not in cache:
            cache[collection] = self.collection_programs(collection) if self.tree else {}
        return cache[collection]

    # ---------------------------------------------------------- the checks
    def check(self, cfg, upstream, fragment_lines, lava_jobs, config_dir=None):
        if not isinstance(cfg, dict):
            self.error('the configuration is not a mapping')
            return
        for key in cfg:
            if key not in SECTIONS:
                self.error(f'unknown section "{key}" (kernelci-pipeline has {", ".join(sorted(SECTIONS))})')
        self.methods = test_methods(upstream)
        trees = self.check_trees(cfg, upstream)
        frags = self.check_fragments(cfg, upstream, fragment_lines, config_dir)
        jobs = self.check_jobs(cfg, upstream, trees, frags)
        self.check_collection_configs(jobs)
        self.check_scheduler(cfg, upstream, jobs)
        self.check_kfd_support(upstream)
        self.check_lava_jobs(upstream, lava_jobs)

    def mapping(self, cfg, name):
        sec = cfg.get(name, {})
        if sec is None:
            sec = {}
        if not isinstance(sec, dict):
            self.error(f'section "{name}" is not a mapping')
            return {}
        return sec

    def check_trees(self, cfg, upstream):
        trees = self.mapping(cfg, 'trees')
        for name, t in trees.items():
            url = (t or {}).get('url') if isinstance(t, dict) else None
            if not isinstance(url, str) or not url.startswith('https://'):
                self.error(f'tree {name}: no https url')
            elif 'example' in url:
                self.warn(f'tree {name}: {url} is a placeholder: the public branch of the series goes there')
        known = set(trees) | set(upstream.get('trees', []))
        for name, b in self.mapping(cfg, 'build_configs').items():
            if not isinstance(b, dict) or b.get('tree') not in known:
                self.error(f'build config {name}: tree {b.get("tree") if isinstance(b, dict) else b!r} is not defined')
            elif not b.get('branch'):
                self.error(f'build config {name}: no branch')
        return known

    def check_fragments(self, cfg, upstream, fragment_lines, config_dir):
        frags = self.mapping(cfg, 'fragments')
        # Each of ours is labs/config/NAME.config (kfd: the --fragment file).
        self.fragment_files = {}
        for name, fr in frags.items():
            if not isinstance(fr, dict):
                self.error(f'fragment {name}: not a mapping')
                continue
            if fr.get('path') != f'kernel/configs/{name}.config':
                self.error(f'fragment {name}: path is {fr.get("path")!r}, not "kernel/configs/{name}.config"')
            configs = fr.get('configs')
            if not isinstance(configs, list) or not configs:
                self.error(f'fragment {name}: no configs')
                continue
            for c in configs:
                m = CONFIG_LINE.match(str(c))
                if not m:
                    self.error(f'fragment {name}: "{c}" is not a CONFIG_ line')
                elif self.tree and (m.group(1) or m.group(3))[7:] not in self.kconfig_symbols():
                    self.error(f'fragment {name}: {m.group(1) or m.group(3)} is not an option of the tree\'s Kconfig')
            if name == 'kfd':
                lines = fragment_lines
            else:
                path = os.path.join(config_dir or os.path.join(CI, 'config'), f'{name}.config')
                if not os.path.isfile(path):
                    self.error(f'fragment {name}: no labs/config/{name}.config (what a lab merges)')
                    continue
                lines = read_fragment(path)
            self.fragment_files[name] = lines
            if [str(c) for c in configs] != lines:
                ours = set(str(c) for c in configs)
                theirs = set(lines)
                diff = sorted(theirs - ours) + [f'not in labs/config/{name}.config: {c}' for c in sorted(ours - theirs)]
                self.error(f'fragment {name} is not labs/config/{name}.config line for line'
                           + (f': {"; ".join(diff)}' if diff else ' (order)'))
        if not isinstance(frags.get('kfd'), dict):
            self.error('no fragment "kfd" (labs/config/kfd.config)')
        self.facts['fragments'] = {n: len(l) for n, l in self.fragment_files.items()}
        return set(frags) | set(upstream.get('fragments', []))

    def check_collection_configs(self, jobs):
        """What the "config" file of each collection a job runs asks for,
        from the fragments of ours that the kbuilds merge (later wins)."""
        if not self.tree:
            return
        have, names = {}, []
        for job in jobs.values():
            if not isinstance(job, dict) or job.get('kind') != 'kbuild':
                continue
            for fr in (job.get('params') or {}).get('fragments') or []:
                fr = str(fr)
                lines = [fr] if fr.startswith('CONFIG_') else self.fragment_files.get(fr)
                if lines is None:
                    continue
                if not fr.startswith('CONFIG_'):
                    names.append(f'labs/config/{fr}.config')
                for line in lines:
                    m = CONFIG_LINE.match(line)
                    if m:
                        have[m.group(1) or m.group(3)] = m.group(2) if m.group(1) else 'n'
        for col in sorted(self.used_collections):
            want = os.path.join(self.selftests(), col, 'config')
            if not os.path.isfile(want):
                continue
            with open(want, encoding='utf-8') as f:
                for line in f:
                    m = CONFIG_LINE.match(line.strip())
                    ok = (m.group(2), 'y') if m and m.group(2) == 'm' else (m.group(2),) if m else ()
                    if m and m.group(1) and have.get(m.group(1)) not in ok:
                        self.error(f'{", ".join(names) or "no fragment of ours"}: {col}/config wants '
                                   f'{m.group(1)}={m.group(2)}')

    def check_jobs(self, cfg, upstream, trees, frags):
        jobs = self.mapping(cfg, 'jobs')
        if not jobs:
            self.error('no jobs')
        for name, job in jobs.items():
            if not isinstance(job, dict):
                self.error(f'job {name}: not a mapping')
                continue
            kind = job.get('kind')
            if kind not in JOB_KINDS:
                self.error(f'job {name}: kind {kind!r} is not one of {", ".join(sorted(JOB_KINDS))}')
            tmpl = job.get('template')
            if not isinstance(tmpl, str) or not tmpl.endswith('.jinja2'):
                self.error(f'job {name}: no template (a config/runtime/*.jinja2)')
            if kind in ('job', 'process', 'test') and not job.get('kcidb_test_suite'):
                self.error(f'job {name}: no kcidb_test_suite')
            params = job.get('params') or {}
            if not isinstance(params, dict):
                self.error(f'job {name}: params is not a mapping')
                params = {}
            for t in ((job.get('rules') or {}).get('tree') or []):
                tname = str(t).lstrip('!').split(':')[0]
                if tname not in trees:
                    self.error(f'job {name}: rules name tree {tname}, which is not defined')
            if kind == 'kbuild':
                self.check_kbuild(name, params, frags)
            tm = params.get('test_method')
            method = self.methods.get(tm)
            if tmpl == 'generic.jinja2':
                if not tm:
                    self.error(f'job {name}: generic.jinja2 without a test_method')
                elif method is None:
                    self.error(f'job {name}: test_method {tm} is not one of generic.jinja2\'s '
                               f'({", ".join(self.methods)}: upstream.yaml test_methods, test_method_change)')
            runner = (method or {}).get('runner')
            if params.get('collections') and runner not in (RUN_KSELFTEST, DIRECT):
                self.error(f'job {name}: kselftest collections, but test_method {tm!r} runs no kselftest '
                           '(upstream.yaml test_methods runner)')
            if runner in (RUN_KSELFTEST, DIRECT):
                self.check_kselftest(name, params, tm, method)
        self.facts['jobs'] = len(jobs)
        return jobs

    def check_kbuild(self, name, params, frags):
        for k in ('arch', 'compiler'):
            if not params.get(k):
                self.error(f'kbuild {name}: no params.{k}')
        fragments = params.get('fragments') or []
        for fr in fragments:
            fr = str(fr)
            if fr.startswith('CONFIG_') or fr.startswith('# CONFIG_'):
                continue
            if fr not in frags:
                self.error(f'kbuild {name}: fragment {fr} is defined neither here nor in kernelci-pipeline')
        if 'kfd' not in fragments:
            self.error(f'kbuild {name}: does not merge the kfd fragment')
        elif 'x86-board' in fragments and fragments.index('kfd') > fragments.index('x86-board'):
            self.error(f'kbuild {name}: kfd after x86-board would make amdgpu a module without the '
                       'firmware x86-board builds in (kfd goes first)')
        if params.get('kselftest') == 'disable':
            self.error(f'kbuild {name}: kselftest disabled, the KFD jobs need its kselftest tarball')

    def check_program(self, where, col, prog, runner):
        """Whether the runner runs PROG of COL: an error if not."""
        p = self.programs(col)
        if not self.tree or p is None:
            return
        if runner == RUN_KSELFTEST:
            if prog in p['extended']:
                self.error(f'{where}: {col}:{prog}: {prog} is in TEST_GEN_PROGS_EXTENDED of {col}: '
                           'run_kselftest.sh never runs it (emit_tests leaves it out of kselftest-list.txt), '
                           'so the job would silently run nothing; run it directly')
            elif prog not in p['run']:
                self.error(f'{where}: {col}:{prog}: {prog} is not a program of {col}')
        elif prog not in p['run'] + p['extended']:
            self.error(f'{where}: {col}:{prog}: {prog} is not a program of {col}')

    def opt_in_args(self, test, args):
        """What the kernel command line ARGS lacks for TEST (OPT_IN)."""
        o = OPT_IN[test]
        have = str(args or '').split()
        missing = [a for a in o['args'] if a not in have]
        mask = debug_mask(have)
        if mask is False:
            missing.append('amdgpu.debug_mask that is a number')
        elif o['exp'] and not (mask or 0) & EXP_RESETS:
            missing.append(f'amdgpu.debug_mask with bit 5 ({EXP_RESETS:#x}, experimental resets)')
        if mask and mask & NO_RING_RESET:
            missing.append(f'amdgpu.debug_mask without bit 6 ({NO_RING_RESET:#x} disables ring resets)')
        return missing

    def gc_cannot(self, test, gcs, args):
        """The GC versions of GCS on which TEST cannot run with ARGS."""
        mask = debug_mask(str(args or '').split()) or 0
        bad = []
        for g in gcs or ['unknown']:
            v = gc_tuple(g)
            fits = [exp for lo, hi, exp in OPT_IN[test]['gc'] if lo <= v < hi]
            if not fits:
                bad.append(f'GC {g}')
            elif fits[0] and not mask & EXP_RESETS:
                bad.append(f'GC {g} without amdgpu.debug_mask bit 5')
        return bad

    def check_kselftest(self, name, params, tm, method):
        cols = str(params.get('collections') or '').split()
        runner = method.get('runner')
        where = f'job {name}'
        if not cols:
            self.error(f'{where}: kselftest without collections')
        progs = {}
        for c in cols:
            p = self.programs(c)
            if p is None:
                self.error(f'{where}: kselftest collection {c} is not in the tree '
                           '(not a TARGETS of tools/testing/selftests/Makefile with a Makefile)')
            else:
                progs[c] = p
                self.used_collections.add(c)
                if p:
                    self.facts.setdefault('collections', {})[c] = p
        tests = str(params.get('tests') or '').split()
        for t in tests:
            col, _, prog = t.partition(':')
            if col not in progs:
                self.error(f'{where}: test {t} is not of the job\'s collections')
            else:
                self.check_program(where, col, prog, runner)
        if runner == DIRECT and not tests:
            self.error(f'{where}: test_method {tm} runs programs directly: it needs tests (COLLECTION:PROGRAM)')
        if runner == RUN_KSELFTEST and not tests:
            for c, p in progs.items():
                if p and not p['run']:
                    self.error(f'{where}: {c} has no program that run_tests runs: run_kselftest.sh would '
                               'run nothing')
        if method.get('proposed'):
            self.notes.append(f'needs upstream test method: {name} uses test_method {tm}, which '
                              'kernelci-core does not have yet (upstream.yaml test_method_change)')
        env = str(params.get('env') or '').split()
        args = params.get('extra_kernel_args')
        for test, o in OPT_IN.items():
            allows = o['env'] in env
            runs = [t for t in tests if t.partition(':')[2] == test]
            if allows and (not runs or len(tests) != 1 or runner != DIRECT):
                self.error(f'{where}: {o["env"]} only in a job that runs {test} alone, directly '
                           '(the others must never reset a GPU)')
            if allows or runs:
                self.opt_in_jobs[name] = test
            if not runs:
                continue
            if runner != DIRECT:
                p = progs.get(o['collection']) or {}
                if test not in p.get('extended', []):
                    self.error(f'{where}: {test} through run_kselftest.sh: it is an opt-in test, to be '
                               'run directly')
                continue
            if not allows:
                self.error(f'{where}: runs {test} without {o["env"]}: it would only skip')
            if method.get('user') != 'root':
                self.error(f'{where}: {test} must run as root; test_method {tm} runs it as '
                           f'{method.get("user") or "an unknown user"}')
            for m in self.opt_in_args(test, args):
                self.error(f'{where}: {test} without {m} on the kernel command line (extra_kernel_args): '
                           'it would skip')
            if not params.get('frequency'):
                self.error(f'{where}: a job that may reset the GPU needs a frequency limit')
        if not tests and KFD_COLLECTION in cols and runner == RUN_KSELFTEST:
            self.main_jobs.add(name)

    def check_scheduler(self, cfg, upstream, jobs):
        sched = cfg.get('scheduler') or []
        if not isinstance(sched, list) or not sched:
            self.error('no scheduler entries')
            return
        platforms = upstream.get('platforms') or {}
        support = upstream.get('kfd_support') or {}
        runtimes = upstream.get('runtimes') or {}
        lava_runtimes = set(runtimes.get('lava') or [])
        k8s_runtimes = set(runtimes.get('kubernetes') or [])
        supported = sorted(p for p, d in platforms.items()
                           if (support.get((d or {}).get('base_name')) or {}).get('kfd'))
        scheduled = {}
        for i, e in enumerate(sched):
            where = f'scheduler entry {i + 1}'
            if not isinstance(e, dict):
                self.error(f'{where}: not a mapping')
                continue
            jname = e.get('job')
            job = jobs.get(jname)
            if not isinstance(job, dict):
                self.error(f'{where}: job {jname} is not defined in jobs')
                continue
            where = f'{where} ({jname})'
            scheduled.setdefault(jname, set())
            ev = e.get('event') or {}
            if ev.get('channel') != 'node' or ev.get('kind') not in EVENT_KINDS or not ev.get('state'):
                self.error(f'{where}: event needs channel node, a kind and a state')
            rt = e.get('runtime') or {}
            if not rt.get('name'):
                self.error(f'{where}: no runtime name')
            if job.get('kind') == 'kbuild':
                if ev.get('kind') != 'checkout':
                    self.error(f'{where}: a kbuild job runs on checkout events')
                if rt.get('name') not in k8s_runtimes:
                    self.error(f'{where}: runtime {rt.get("name")} is not a build runtime of kernelci-pipeline')
                continue
            if ev.get('kind') != 'kbuild':
                self.error(f'{where}: a test job runs on the kbuild event of its kernel')
                continue
            kb = jobs.get(ev.get('name'))
            if not isinstance(kb, dict) or kb.get('kind') != 'kbuild':
                self.error(f'{where}: event name {ev.get("name")} is not a kbuild job defined here')
                continue
            if rt.get('type') != 'lava' or rt.get('name') not in lava_runtimes:
                self.error(f'{where}: runtime {rt.get("name")} is not a LAVA lab of kernelci-pipeline')
            plats = e.get('platforms') or []
            if not plats:
                self.error(f'{where}: no platforms')
            arch = (kb.get('params') or {}).get('arch')
            for p in plats:
                d = platforms.get(p)
                if d is None:
                    self.error(f'{where}: platform {p} is not defined in kernelci-pipeline')
                    continue
                s = support.get(d.get('base_name'))
                if not s:
                    self.error(f'{where}: {p}: KFD support of {d.get("base_name")} is not known (upstream.yaml kfd_support)')
                elif not s.get('kfd'):
                    self.error(f'{where}: {p}: {s.get("apu")}: KFD does not support it')
                if d.get('arch') != arch:
                    self.error(f'{where}: {p} is {d.get("arch")}, the kernel {ev.get("name")} is {arch}')
                if jname in self.opt_in_jobs:
                    test = self.opt_in_jobs[jname]
                    bad = self.gc_cannot(test, (s or {}).get('gc'), (job.get('params') or {}).get('extra_kernel_args'))
                    if bad:
                        self.error(f'{where}: {p} cannot run {test}: {", ".join(bad)} (it needs '
                                   f'{OPT_IN[test]["where"]}): the job would only ever skip')
                scheduled[jname].add(p)
        for jname, job in jobs.items():
            if not isinstance(job, dict):
                continue
            if jname not in scheduled:
                if jname in self.opt_in_jobs:
                    test = self.opt_in_jobs[jname]
                    args = (job.get('params') or {}).get('extra_kernel_args')
                    could = [p for p in supported
                             if not self.gc_cannot(test, (support.get(platforms[p].get('base_name')) or {}).get('gc'),
                                                   args)]
                    self.facts.setdefault('unscheduled', []).append((jname, test, could))
                else:
                    self.error(f'job {jname} has no scheduler entry')
            elif jname in self.main_jobs:
                missing = [p for p in supported if p not in scheduled[jname]]
                if missing:
                    self.error(f'job {jname}: not scheduled on {", ".join(missing)} (KFD supports them)')
        if not self.main_jobs:
            self.error(f'no kselftest job runs the whole {KFD_COLLECTION} collection')
        self.facts['scheduler'] = len(sched)
        self.facts['platforms'] = supported

    def check_kfd_support(self, upstream):
        if not self.tree:
            return
        path = os.path.join(self.tree, 'drivers', 'gpu', 'drm', 'amd', 'amdkfd', 'kfd_device.c')
        try:
            with open(path, encoding='utf-8', errors='replace') as f:
                text = f.read()
        except OSError:
            self.error(f'no {path}')
            return
        for base, s in (upstream.get('kfd_support') or {}).items():
            if s.get('kfd'):
                for gc in s.get('gc') or []:
                    ip = 'IP_VERSION(%s)' % ', '.join(gc.split('.'))
                    if f'case {ip}' not in text:
                        self.error(f'kfd_support: {base} ({s.get("apu")}): GC {gc} is not a case of kfd_device.c')
            elif s.get('chip') and re.search(r'\bcase %s\b' % re.escape(s['chip']), text):
                self.error(f'kfd_support: {base}: {s["chip"]} is a case of kfd_device.c, so KFD supports it')

    def check_lava_jobs(self, upstream, lava_jobs):
        if not lava_jobs:
            return
        platforms = upstream.get('platforms') or {}
        support = upstream.get('kfd_support') or {}
        for path in sorted(glob.glob(os.path.join(lava_jobs, '*.yaml'))):
            base = os.path.basename(path)
            with open(path, encoding='utf-8') as f:
                job = yaml.safe_load(f) or {}
            dt = job.get('device_type')
            gcs = None
            if dt not in (None, 'qemu'):
                d = platforms.get(dt)
                s = support.get((d or {}).get('base_name')) or {}
                if d is None or not s.get('kfd'):
                    self.error(f'{base}: device type {dt} is not a platform KFD supports')
                gcs = s.get('gc')
            self.check_lava_tests(base, job, gcs)

    def check_lava_tests(self, base, job, gcs):
        """The kselftest programs a LAVA job runs, and how (check_kselftest
        for LAVA): GCS is the device type's GC versions (None: QEMU)."""
        actions = [a for a in job.get('actions') or [] if isinstance(a, dict)]
        boots = [a['boot'] for a in actions if isinstance(a.get('boot'), dict)]
        args = ' '.join(str(b.get('extra_kernel_args') or '') for b in boots)
        prompts = [str(p).rstrip() for b in boots for p in b.get('prompts') or []]
        root_shell = bool(prompts) and all(p.endswith('#') for p in prompts)
        env = {str(k): str(v) for k, v in (job.get('environment') or {}).items()}
        through, direct = [], []  # (definition, col, prog) / (definition, col, prog, step)
        for a in actions:
            for d in (a.get('test') or {}).get('definitions') or []:
                dname = f'{base}: test definition {d.get("name")}'
                path = str(d.get('path') or '')
                params = d.get('parameters') or d.get('params') or {}
                if d.get('from') == 'inline':
                    steps = ((d.get('repository') or {}).get('run') or {}).get('steps') or []
                    for step in steps:
                        step = str(step)
                        for prog in PROG_RUN.findall(step):
                            col = self.collection_of(prog, step)
                            if not col and prog in OPT_IN:
                                col = OPT_IN[prog]['collection']
                                self.error(f'{dname}: runs {prog}, which is not a program of {col} in the tree')
                            if col:
                                direct.append((dname, col, prog, step))
                elif path.endswith('lava/testdefs/kfd-kselftest.yaml') and path != OUR_KSELFTEST:
                    self.error(f'{dname}: path {path} is not where the repository has the test definition '
                               f'({OUR_KSELFTEST}): the lab would find nothing there')
                elif path == OUR_KSELFTEST and not self.our_testdef_ok(dname):
                    pass
                elif path.endswith(LINARO_KSELFTEST) or path == OUR_KSELFTEST:
                    if path == OUR_KSELFTEST:
                        cols, tests = [str(params.get('COLLECTION') or KFD_COLLECTION)], []
                    else:
                        cols = str(params.get('TST_CMDFILES') or '').split()
                        tests = str(params.get('TST_CASENAME') or '').split()
                    for c in cols:
                        p = self.programs(c)
                        if p is None:
                            self.error(f'{dname}: kselftest collection {c} is not in the tree')
                        elif p and not p['run']:
                            self.error(f'{dname}: {c} has no program that run_tests runs: run_kselftest.sh '
                                       'would run nothing')
                    for t in tests:
                        col, _, prog = t.partition(':')
                        self.check_program(dname, col, prog, RUN_KSELFTEST)
                        through.append((dname, col, prog))
                    for c in cols if not tests else []:
                        through += [(dname, c, prog) for prog in (self.programs(c) or {}).get('run', [])]
        ran = {prog for _, _, prog in through} | {prog for _, _, prog, _ in direct}
        for test, o in OPT_IN.items():
            var, _, val = o['env'].partition('=')
            in_env = env.get(var) == val
            for dname, col, prog in through:
                if prog == test:
                    # check_program has said so when the tree has it as
                    # TEST_GEN_PROGS_EXTENDED.
                    if test not in (self.programs(col) or {}).get('extended', []):
                        self.error(f'{dname}: {test} through run_kselftest.sh: it is an opt-in test, to be '
                                   'run directly')
            runs = [(dname, step) for dname, _, prog, step in direct if prog == test]
            if in_env and (not runs or ran != {test}):
                self.error(f'{base}: {o["env"]} (environment) only in a job that runs {test} alone, directly '
                           '(the others must never reset a GPU)')
            for dname, step in runs:
                if not (in_env or re.search(r'(?:^|[\s;&|(])' + re.escape(o['env']) + r'\s', step)):
                    self.error(f'{dname}: runs {test} without {o["env"]} (on its command line or in the job\'s '
                               'environment): it would only skip')
                if not root_shell or OTHER_USER.search(step):
                    self.error(f'{dname}: {test} must run as root: in the test shell of a root login (every boot '
                               'prompt ending in "#"), not through su, sudo, runuser or setpriv')
            if not runs:
                continue
            if ran != {test}:
                self.error(f'{base}: runs {test} with {", ".join(sorted(ran - {test}))}: an opt-in test runs '
                           'alone (the others must never reset a GPU)')
            for m in self.opt_in_args(test, args):
                self.error(f'{base}: {test} without {m} on the kernel command line (the boot\'s '
                           'extra_kernel_args): it would skip')
            if gcs is not None:
                bad = self.gc_cannot(test, gcs, args)
                if bad:
                    self.error(f'{base}: device type {job.get("device_type")} cannot run {test}: {", ".join(bad)} '
                               f'(it needs {OPT_IN[test]["where"]}): the job would only ever skip')
            if job.get('priority') != 'low':
                self.error(f'{base}: a job that may reset the GPU has priority low, not {job.get("priority")}')
            if any(b.get('failure_retry') for b in boots):
                self.error(f'{base}: a job that may reset the GPU has no failure_retry (a retry would hang '
                           'the GPU again)')
            self.facts.setdefault('lava_opt_in', []).append(f'{base}: {test}')

    def our_testdef_ok(self, dname):
        """OUR_KSELFTEST is in the repository, with the scripts its run
        steps call by ./PATH (from the repository's top, as a lab's
        clone runs them)."""
        top = os.path.dirname(CI)
        try:
            with open(os.path.join(top, OUR_KSELFTEST), encoding='utf-8') as f:
                d = yaml.safe_load(f) or {}
        except OSError:
            self.error(f'{dname}: the repository has no {OUR_KSELFTEST}')
            return False
        ok = True
        for step in (d.get('run') or {}).get('steps') or []:
            for script in re.findall(r'(?:^|\s)\./([^\s;&|]+)', str(step)):
                if not os.path.isfile(os.path.join(top, script)):
                    self.error(f'{dname}: {OUR_KSELFTEST} runs ./{script}, which the repository does not have')
                    ok = False
        return ok

    def collection_of(self, prog, step):
        """The collection of a program run by path in a shell step: one
        named in the step (.../kselftest/COLLECTION), else its OPT_IN
        entry's, else the KFD collection, if it has the program; without a
        tree only the OPT_IN programs are known."""
        if not self.tree:
            return OPT_IN[prog]['collection'] if prog in OPT_IN else None
        named = re.findall(r'kselftest/([\w.+/-]+?)/?(?=$|[\s;&|)])', step)
        extra = [OPT_IN[prog]['collection']] if prog in OPT_IN else []
        for c in named + extra + [KFD_COLLECTION]:
            p = self.programs(c)
            if p and prog in p['run'] + p['extended']:
                return c
        return None


def gc_tuple(gc):
    try:
        return tuple(int(x) for x in str(gc).split('.'))
    except ValueError:
        return (0,)


def debug_mask(args):
    """amdgpu.debug_mask of a kernel command line (a list of its words):
    None when not given, False when not a number; the last one counts."""
    mask = None
    for a in args:
        if a.startswith('amdgpu.debug_mask='):
            try:
                mask = int(a.partition('=')[2], 0)
            except ValueError:
                mask = False
    return mask


def test_methods(upstream):
    """upstream.yaml's test methods (test_methods, and test_method_change
    as "proposed"), each with its runner and user."""
    methods = {}
    have = upstream.get('test_methods') or {}
    if isinstance(have, list):
        have = {m: {'runner': RUN_KSELFTEST if m == 'kselftest' else None} for m in have}
    for name, m in have.items():
        methods[str(name)] = dict(m or {}, proposed=False)
    for name, m in (upstream.get('test_method_change') or {}).items():
        methods[str(name)] = dict(m or {}, proposed=True)
    return methods


def load(path):
    with open(path, encoding='utf-8') as f:
        return yaml.safe_load(f)


def read_fragment(path):
    with open(path, encoding='utf-8') as f:
        return [line.strip() for line in f if line.strip() and not line.startswith('#')
                or line.startswith('# CONFIG_')]


def validate(config, upstream, fragment, tree, lava_jobs):
    c = Checker(tree)
    try:
        cfg = load(config)
    except OSError as exc:
        c.error(f'{config}: {exc}')
        return c
    except yaml.YAMLError as exc:
        c.error(f'{config} does not parse as YAML: {exc}'.replace('\n', ' '))
        return c
    try:
        c.check(cfg, load(upstream), read_fragment(fragment), lava_jobs, os.path.dirname(os.path.abspath(fragment)))
    except (OSError, yaml.YAMLError) as exc:
        c.error(str(exc).replace('\n', ' '))
    return c


def _schedule(job, *platforms):
    """An edit of kfd.yaml: JOB scheduled on PLATFORMS."""
    return ('config', 'scheduler:\n',
            f'scheduler:\n\n  - job: {job}\n    event:\n      channel: node\n'
            '      kind: kbuild\n      state: available\n      name: kbuild-gcc-12-x86-chromeos-amd-kfd\n'
            '    runtime:\n      type: lava\n      name: lava-collabora\n    platforms:\n'
            + ''.join(f'      - {p}\n' for p in platforms))


HANG_LAVA = 'lava/chromebook-amd-kfd-queue-hang.yaml'
KCQ_LAVA = 'lava/chromebook-amd-kcq-pipe-reset.yaml'
MAIN_LAVA = 'lava/chromebook-amd-kfd-kselftest.yaml'
KCQ_FRAGMENT = 'labs/config/amdgpu-kcq-reset.config'
ZORKS = ('asus-CM1400CXA-dalboz', 'hp-14b-na0052xx-zork', 'hp-x360-14a-cb0001xx-zork', 'lenovo-TPad-C13-Yoga-zork')
GUYBRUSH = 'acer-cp514-3wh-r0qs-guybrush'
SKYRIM = 'dell-latitude-3445-7520c-skyrim'
# The KernelCI opt-in jobs (kfd.yaml) from their test_method line on.
HANG_JOB = "      test_method: kselftest-program\n      boot_commands: nfs\n"
KCQ_JOB = ("      test_method: kselftest-program\n      boot_commands: nfs\n"
           "      nfsroot: 'https://storage.kernelci.org/images/rootfs/debian/bookworm-kselftest/20250724.0/{debarch}'\n"
           "      # One program")

# Broken copies for --self-test: (what, [(file, old, new) ...], expected
# error).  file: config (kfd.yaml), fragment (kfd.config), upstream,
# labs/config/NAME.config, lava/NAME.yaml (labs/lava/jobs/); the first "old"
# in the file is replaced.
BROKEN = [
    ('LAVA: our test definition named at a path the repository does not have',
     [('lava/qemu-x86_64-kfd-kselftest.yaml', 'path: labs/lava/testdefs/', 'path: ci/lava/testdefs/')],
     'is not where the repository has the test definition'),
    ('scheduler names an undefined job',
     [('config', '  - job: kselftest-kfd\n', '  - job: kselftest-kfd-undefined\n')], 'is not defined in jobs'),
    ('grunt among the platforms',
     [('config', '      - acer-cp514-3wh-r0qs-guybrush\n',
       '      - acer-R721T-grunt\n      - acer-cp514-3wh-r0qs-guybrush\n')],
     'KFD does not support'),
    ('a platform kernelci-pipeline does not have',
     [('config', '      - hp-x360-14a-cb0001xx-zork\n', '      - hp-x360-14a-cb0001xx-zork-nonexistent\n')],
     'is not defined in kernelci-pipeline'),
    ('fragment kfd is not labs/config/kfd.config',
     [('config', "      - 'CONFIG_HSA_AMD=y'\n", '')], 'is not labs/config/kfd.config'),
    ('labs/config/kfd.config without HSA_AMD',
     [('fragment', 'CONFIG_HSA_AMD=y\n', '')], 'is not labs/config/kfd.config'),
    ('an option the tree does not have',
     [('config', 'CONFIG_HSA_AMD=y', 'CONFIG_HSA_AMD_NONEXISTENT=y'),
      ('fragment', 'CONFIG_HSA_AMD=y', 'CONFIG_HSA_AMD_NONEXISTENT=y')],
     "is not an option of the tree's Kconfig"),
    ('kbuild without the kfd fragment',
     [('config', '        - kfd\n', '')], 'does not merge the kfd fragment'),
    ('collection not in the tree',
     [('config', 'collections: drivers/gpu/amdkfd\n', 'collections: drivers/gpu/amdkfd-nonexistent\n')],
     'is not in the tree'),
    ('fragment amdgpu-kcq-reset is not labs/config/amdgpu-kcq-reset.config',
     [(KCQ_FRAGMENT, 'CONFIG_FAULT_INJECTION=y\n', '')],
     'fragment amdgpu-kcq-reset is not labs/config/amdgpu-kcq-reset.config'),
    ('the kbuild without FAULT_INJECTION_DEBUG_FS, which drivers/gpu/amdgpu/config asks for',
     [('config', "      - 'CONFIG_FAULT_INJECTION_DEBUG_FS=y'\n", ''),
      (KCQ_FRAGMENT, 'CONFIG_FAULT_INJECTION_DEBUG_FS=y\n', '')],
     'drivers/gpu/amdgpu/config wants CONFIG_FAULT_INJECTION_DEBUG_FS=y'),
    ('kfd_queue_hang (TEST_GEN_PROGS_EXTENDED) through run_kselftest.sh: the kselftest method',
     [('config', HANG_JOB, HANG_JOB.replace('kselftest-program', 'kselftest'))],
     'kfd_queue_hang is in TEST_GEN_PROGS_EXTENDED of drivers/gpu/amdkfd: run_kselftest.sh never runs it'),
    ('amdgpu_kcq_pipe_reset (TEST_GEN_PROGS_EXTENDED) through run_kselftest.sh: the kselftest method',
     [('config', KCQ_JOB, KCQ_JOB.replace('kselftest-program', 'kselftest'))],
     'amdgpu_kcq_pipe_reset is in TEST_GEN_PROGS_EXTENDED of drivers/gpu/amdgpu: run_kselftest.sh never runs it'),
    ('a collection with nothing run_tests runs, through run_kselftest.sh',
     [('config', 'collections: drivers/gpu/amdkfd\n', 'collections: drivers/gpu/amdkfd drivers/gpu/amdgpu\n')],
     'drivers/gpu/amdgpu has no program that run_tests runs'),
    ('hang test allowed without amdgpu.cwsr_enable=0',
     [('config', "      extra_kernel_args: 'amdgpu.cwsr_enable=0'\n", '')], 'without amdgpu.cwsr_enable=0'),
    ('kfd_queue_hang run directly without its variable',
     [('config', "      env: 'KFD_QUEUE_HANG_ALLOW_RESET=1'\n", '')],
     'runs kfd_queue_hang without KFD_QUEUE_HANG_ALLOW_RESET=1'),
    ('amdgpu_kcq_pipe_reset without amdgpu.debug_mask=0x20',
     [('config', "      extra_kernel_args: 'amdgpu.debug_mask=0x20'\n", '')],
     'amdgpu_kcq_pipe_reset without amdgpu.debug_mask with bit 5'),
    ('amdgpu_kcq_pipe_reset with ring resets disabled (debug_mask bit 6)',
     [('config', "      extra_kernel_args: 'amdgpu.debug_mask=0x20'\n",
       "      extra_kernel_args: 'amdgpu.debug_mask=0x60'\n")],
     'without bit 6'),
    ('the opt-in tests run directly, but not as root',
     [('upstream', '    runner: direct\n    user: root\n', '    runner: direct\n    user: nobody\n')],
     'kfd_queue_hang must run as root'),
    ('the whole collection with the hang allowed',
     [('config', "      job_timeout: 30\n", "      job_timeout: 30\n      env: 'KFD_QUEUE_HANG_ALLOW_RESET=1'\n")],
     'only in a job that runs kfd_queue_hang alone'),
    ('a typo in test_method',
     [('config', '      test_method: kselftest\n', '      test_method: kselftests\n')],
     'test_method kselftests is not one of'),
    ('the main job without test_method',
     [('config', '      test_method: kselftest\n', '')], 'generic.jinja2 without a test_method'),
    ('the hang job without tests (the whole collection with the hang allowed)',
     [('config', "      tests: 'drivers/gpu/amdkfd:kfd_queue_hang'\n", '')],
     'only in a job that runs kfd_queue_hang alone'),
    ('the hang job scheduled on skyrim (GC 10.3.7) without amdgpu.debug_mask=0x20',
     [_schedule('kselftest-kfd-queue-hang', SKYRIM)],
     'cannot run kfd_queue_hang: GC 10.3.7 without amdgpu.debug_mask bit 5'),
    ('the kcq job scheduled on a GC 9.4.3 platform (no pipe step for KCQs)',
     [('upstream', "    gc: ['9.3.0']\n", "    gc: ['9.4.3']\n"),
      _schedule('kselftest-amdgpu-kcq-pipe-reset', GUYBRUSH)],
     'cannot run amdgpu_kcq_pipe_reset: GC 9.4.3'),
    ('the main job not on every supported platform',
     [('config', '      - lenovo-TPad-C13-Yoga-zork\n', '')],
     'not scheduled on lenovo-TPad-C13-Yoga-zork'),
    ('not YAML', [('config', 'scheduler:\n', 'scheduler: [\n')], 'does not parse as YAML'),
    # LAVA
    ('LAVA: kfd_queue_hang (TEST_GEN_PROGS_EXTENDED) named to Linaro\'s kselftest.yaml',
     [(MAIN_LAVA, '        TST_CMDFILES: drivers/gpu/amdkfd\n',
       '        TST_CASENAME: drivers/gpu/amdkfd:kfd_queue_hang\n')],
     'kfd_queue_hang is in TEST_GEN_PROGS_EXTENDED of drivers/gpu/amdkfd: run_kselftest.sh never runs it'),
    ('LAVA: drivers/gpu/amdgpu (nothing run_tests runs) to Linaro\'s kselftest.yaml',
     [(MAIN_LAVA, '        TST_CMDFILES: drivers/gpu/amdkfd\n', '        TST_CMDFILES: drivers/gpu/amdgpu\n')],
     'drivers/gpu/amdgpu has no program that run_tests runs'),
    ('LAVA: kfd_queue_hang run directly without its variable',
     [(HANG_LAVA, 'KFD_QUEUE_HANG_ALLOW_RESET=1 ./kfd_queue_hang', './kfd_queue_hang')],
     'runs kfd_queue_hang without KFD_QUEUE_HANG_ALLOW_RESET=1'),
    ('LAVA: kfd_queue_hang run as another user',
     [(HANG_LAVA, 'rc=0; KFD_QUEUE_HANG_ALLOW_RESET=1 ./kfd_queue_hang',
       'rc=0; sudo -u nobody KFD_QUEUE_HANG_ALLOW_RESET=1 ./kfd_queue_hang')],
     'kfd_queue_hang must run as root'),
    ('LAVA: kfd_queue_hang in a shell that is not root\'s',
     [(HANG_LAVA, "    - '/ #'\n", "    - '/ $'\n")],
     'kfd_queue_hang must run as root'),
    ('LAVA: kfd_queue_hang without amdgpu.cwsr_enable=0',
     [(HANG_LAVA, '    extra_kernel_args: amdgpu.cwsr_enable=0\n', '')],
     'kfd_queue_hang without amdgpu.cwsr_enable=0'),
    ('LAVA: amdgpu_kcq_pipe_reset without amdgpu.debug_mask=0x20',
     [(KCQ_LAVA, '    extra_kernel_args: amdgpu.debug_mask=0x20\n', '')],
     'amdgpu_kcq_pipe_reset without amdgpu.debug_mask with bit 5'),
    ('LAVA: kfd_queue_hang on skyrim (GC 10.3.7) without amdgpu.debug_mask=0x20',
     [(HANG_LAVA, 'device_type: hp-x360-14a-cb0001xx-zork\n', f'device_type: {SKYRIM}\n')],
     'cannot run kfd_queue_hang: GC 10.3.7 without amdgpu.debug_mask bit 5'),
    ('LAVA: kfd_queue_hang at medium priority',
     [(HANG_LAVA, 'priority: low\n', 'priority: medium\n')], 'has priority low'),
    ('LAVA: kfd_queue_hang with failure_retry',
     [(HANG_LAVA, '    commands: nfs\n', '    commands: nfs\n    failure_retry: 3\n')], 'no failure_retry'),
    ('LAVA: the hang allowed in the main job\'s environment',
     [(MAIN_LAVA, 'priority: medium\n', "priority: medium\nenvironment:\n  KFD_QUEUE_HANG_ALLOW_RESET: '1'\n")],
     'only in a job that runs kfd_queue_hang alone'),
]

# Copies for --self-test that must be accepted (no error).
ACCEPTED = [
    ('the hang job scheduled on the zorks and guybrush (GFX 9 with the HWS)',
     [_schedule('kselftest-kfd-queue-hang', *ZORKS, GUYBRUSH)]),
    ('the hang job with amdgpu.debug_mask=0x20 scheduled on skyrim (GC 10.3.7)',
     [('config', "      extra_kernel_args: 'amdgpu.cwsr_enable=0'\n",
       "      extra_kernel_args: 'amdgpu.cwsr_enable=0 amdgpu.debug_mask=0x20'\n"),
      _schedule('kselftest-kfd-queue-hang', SKYRIM)]),
    ('the kcq job scheduled on every supported platform (GC 9.1 to 10.3.7)',
     [_schedule('kselftest-amdgpu-kcq-pipe-reset', *ZORKS, GUYBRUSH, SKYRIM)]),
    ('LAVA: kfd_queue_hang on skyrim with amdgpu.debug_mask=0x20',
     [(HANG_LAVA, 'device_type: hp-x360-14a-cb0001xx-zork\n', f'device_type: {SKYRIM}\n'),
      (HANG_LAVA, '    extra_kernel_args: amdgpu.cwsr_enable=0\n',
       '    extra_kernel_args: amdgpu.cwsr_enable=0 amdgpu.debug_mask=0x20\n')]),
    ('LAVA: amdgpu_kcq_pipe_reset on skyrim',
     [(KCQ_LAVA, 'device_type: hp-x360-14a-cb0001xx-zork\n', f'device_type: {SKYRIM}\n')]),
    ('LAVA: the hang allowed in the job\'s environment instead of on the command line',
     [(HANG_LAVA, 'KFD_QUEUE_HANG_ALLOW_RESET=1 ./kfd_queue_hang', './kfd_queue_hang'),
      (HANG_LAVA, 'priority: low\n', "priority: low\nenvironment:\n  KFD_QUEUE_HANG_ALLOW_RESET: '1'\n")]),
]

# The Makefile parser (collection_programs) on a fixture tree: what
# run_tests runs, and what it only builds and installs.
FIXTURE_TARGETS = 'TARGETS += drivers/fixture\n'
FIXTURE_MAKEFILE = '''CFLAGS += -Wall
TEST_GEN_PROGS := gen_a \\
\tgen_b
TEST_PROGS += script.sh
TEST_CUSTOM_PROGS := $(OUTPUT)/custom
TEST_GEN_PROGS_EXTENDED := optin_a
TEST_GEN_PROGS_EXTENDED += optin_b
TEST_PROGS_EXTENDED := helper.sh
include ../../lib.mk
'''
FIXTURE_PROGRAMS = {'run': ['gen_a', 'gen_b', 'script.sh', 'custom'],
                    'extended': ['optin_a', 'optin_b', 'helper.sh']}


def parser_fixture(tmp):
    sel = os.path.join(tmp, 'fixture-tree', 'tools', 'testing', 'selftests')
    os.makedirs(os.path.join(sel, 'drivers', 'fixture'))
    with open(os.path.join(sel, 'Makefile'), 'w', encoding='utf-8') as f:
        f.write(FIXTURE_TARGETS)
    with open(os.path.join(sel, 'drivers', 'fixture', 'Makefile'), 'w', encoding='utf-8') as f:
        f.write(FIXTURE_MAKEFILE)
    got = Checker(os.path.join(tmp, 'fixture-tree')).collection_programs('drivers/fixture')
    if got != FIXTURE_PROGRAMS:
        return [f'self-test: the Makefile fixture parsed as {got}, not {FIXTURE_PROGRAMS}']
    return []


def self_test(args):
    """Each broken copy must be rejected with its error, each accepted copy
    accepted, and the Makefile fixture parsed as it is."""
    texts = {}
    for key, path in (('config', args.config), ('fragment', args.fragment), ('upstream', args.upstream)):
        with open(path, encoding='utf-8') as f:
            texts[key] = f.read()
    config_dir = os.path.dirname(os.path.abspath(args.fragment))
    for path in glob.glob(os.path.join(config_dir, '*.config')):
        if os.path.abspath(path) != os.path.abspath(args.fragment):
            with open(path, encoding='utf-8') as f:
                texts[f'labs/config/{os.path.basename(path)}'] = f.read()
    for path in glob.glob(os.path.join(args.lava_jobs or '', '*.yaml')) if args.lava_jobs else []:
        with open(path, encoding='utf-8') as f:
            texts[f'lava/{os.path.basename(path)}'] = f.read()
    failures = []
    with tempfile.TemporaryDirectory(prefix='kfd-kernelci-') as tmp:
        failures += parser_fixture(tmp)
        cases = [(what, edits, expect) for what, edits, expect in BROKEN] + \
                [(what, edits, None) for what, edits in ACCEPTED]
        for n, (what, edits, expect) in enumerate(cases):
            copy = dict(texts)
            broken = False
            for which, old, new in edits:
                if old not in copy.get(which, ''):
                    failures.append(f'self-test: cannot edit the copy ({what}): "{old.strip()}" not in {which}')
                    broken = True
                    break
                copy[which] = copy[which].replace(old, new, 1)
            if broken:
                continue
            d = os.path.join(tmp, str(n))
            os.makedirs(os.path.join(d, 'config'))
            os.makedirs(os.path.join(d, 'lava'))
            paths = {'config': os.path.join(d, 'kfd.yaml'), 'upstream': os.path.join(d, 'upstream.yaml'),
                     'fragment': os.path.join(d, 'config', 'kfd.config')}
            for key, text in copy.items():
                if key.startswith('labs/config/'):
                    path = os.path.join(d, 'config', key[len('labs/config/'):])
                elif key.startswith('lava/'):
                    path = os.path.join(d, key)
                else:
                    path = paths[key]
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(text)
            c = validate(paths['config'], paths['upstream'], paths['fragment'], args.tree,
                         os.path.join(d, 'lava') if args.lava_jobs else None)
            if expect is None:
                if c.errors:
                    failures.append(f'self-test: the copy ({what}) was rejected: ' + '; '.join(c.errors[:2]))
            elif not c.errors:
                failures.append(f'self-test: the broken copy ({what}) was accepted')
            elif not any(expect.lower() in e.lower() for e in c.errors):
                failures.append(f'self-test: the broken copy ({what}) was rejected, but not for that: '
                                + '; '.join(c.errors[:2]))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tree', help='the kernel tree with the series (tools/testing/selftests, Kconfig)')
    ap.add_argument('--config', default=os.path.join(HERE, 'kfd.yaml'))
    ap.add_argument('--upstream', default=os.path.join(HERE, 'upstream.yaml'))
    ap.add_argument('--fragment', default=os.path.join(CI, 'config', 'kfd.config'))
    ap.add_argument('--lava-jobs', default=os.path.join(CI, 'lava', 'jobs'))
    ap.add_argument('--self-test', action='store_true', help='also check that broken copies are rejected and good ones accepted')
    args = ap.parse_args()
    if args.tree and not os.path.isdir(os.path.join(args.tree, 'tools', 'testing', 'selftests')):
        sys.exit(f'error: {args.tree} is not a kernel tree')

    c = validate(args.config, args.upstream, args.fragment, args.tree, args.lava_jobs)
    for w in c.warnings:
        print(f'warning: {w}')
    for e in c.errors:
        print(f'error: {e}')
    for n in c.notes:
        print(f'note: {n}')
    failures = self_test(args) if args.self_test and not c.errors else []
    for f in failures:
        print(f)
    if c.errors or failures:
        return 1
    cols = c.facts.get('collections', {})
    frags = ', '.join(f'{n} = labs/config/{n}.config ({k} options)' for n, k in c.facts.get('fragments', {}).items())
    summary = (f'{os.path.relpath(args.config, os.path.dirname(CI))}: valid: {c.facts.get("jobs")} jobs, '
               f'{c.facts.get("scheduler")} scheduler entries, platforms {", ".join(c.facts.get("platforms", []))} '
               f'(not grunt); fragments {frags}{", in the Kconfig of the tree" if args.tree else ""}')
    for jname, test, could in c.facts.get('unscheduled', []):
        cannot = [p for p in c.facts.get('platforms', []) if p not in could]
        summary += (f'; not scheduled: {jname} ({test}, run directly; opt-in GPU reset test, labs/README.md): '
                    f'its GPUs are those of {len(could)} of the {len(c.facts.get("platforms", []))} platforms'
                    + (f' (not {", ".join(cannot)})' if cannot else ''))
    method_notes = [n for n in c.notes if n.startswith('needs upstream test method')]
    if method_notes:
        summary += (f'; {len(method_notes)} jobs need a test method kernelci-core does not have yet '
                    '(upstream.yaml test_method_change)')
    for col, progs in cols.items():
        summary += f'; {col}: {" ".join(progs["run"]) or "(nothing run_tests runs)"}'
        if progs['extended']:
            summary += f', run directly only: {" ".join(progs["extended"])}'
    if c.facts.get('lava_opt_in'):
        summary += f'; LAVA opt-in jobs: {", ".join(c.facts["lava_opt_in"])}'
    if args.self_test:
        summary += (f'; {len(BROKEN)} broken copies rejected, {len(ACCEPTED)} copies accepted, '
                    'Makefile parser fixture')
    print(summary)
    return 0


if __name__ == '__main__':
    sys.exit(main())

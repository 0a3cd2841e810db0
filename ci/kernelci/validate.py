#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Offline check of ci/kernelci/kfd.yaml: what kernelci-pipeline needs of it.

    validate.py --tree KERNEL_TREE [--self-test] [--config kfd.yaml]
                [--upstream upstream.yaml] [--fragment kfd.config]
                [--lava-jobs DIR]

kernelci-pipeline's own validator (tests/validate_yaml.py) is not
packaged; this checks the same kind of thing, and what is ours to get
right:

  sections      only kernelci-pipeline's (trees, build_configs, fragments,
                jobs, scheduler, ...), every one a mapping or list as there
  trees         each has an https URL; build configs name a defined tree
  fragments     path kernel/configs/NAME.config and CONFIG_ lines; "kfd" is
                ci/config/kfd.config line for line, every option exists in
                the tree's Kconfig, and it has what the collection's own
                "config" file asks for
  jobs          kind, template, kcidb_test_suite, params as the config
                reference requires; generic.jinja2 jobs: a test_method
                kernelci-pipeline knows (upstream.yaml test_methods), and
                kselftest for a job with collections; kbuild: arch,
                compiler, fragments that
                exist (ours or upstream's), the kfd fragment before
                x86-board, kselftests built; kselftest jobs: the
                collection exists in the tree (a TARGETS of the selftests'
                Makefile, with a Makefile), each test is a program of it;
                the hang test only with KFD_QUEUE_HANG_ALLOW_RESET=1 and
                amdgpu.cwsr_enable=0 and a frequency, and no other job
                allows it; rules name known trees
  scheduler     every entry names a defined job; kbuild jobs on checkout
                events, test jobs on the kbuild event of a defined kbuild
                job and a known runtime; platforms known to
                kernelci-pipeline (upstream.yaml), of the kbuild's arch,
                with an APU KFD supports (upstream.yaml kfd_support: not
                grunt, Stoney); the main kselftest job (the whole
                collection) on every such platform; the hang job only on
                a platform whose GPU can run kfd_queue_hang (every GC of
                it >= 9.4.3 and < 10: per-queue reset on GFX 9), so on
                none of KernelCI's Chromebooks: it may stay unscheduled
  rules         each test job on each platform evaluated as kernelci-
                pipeline's should_create_node does: the kbuild's and the
                job's rules, and the platform's (upstream.yaml, copied
                from platforms-chromeos.yaml), against every checkout
                (build_configs) and the kbuild's defconfig, fragments and
                arch, for the kernel version of the tree.  A job no
                checkout reaches is an error, unless upstream.yaml's
                platform_rule_change (what the pull request changes in
                platforms-chromeos.yaml) makes it reachable: then it is
                reported as "needs upstream rule change", not as
                schedulable
  kfd_support   checked against the tree's kfd_device.c: each supported GC
                version is a case there, the unsupported chip is not
  LAVA jobs     the device types of ci/lava/jobs/ are supported platforms

--self-test also makes broken copies (an undefined job, grunt, a fragment
that is not ci/config/kfd.config, a collection not in the tree, a
test_method typo, the hang job scheduled on a Chromebook, a platform
rule that does not allow the series' branch, ...) and fails unless each
is rejected with its own error.  Exit status 0 when valid; the notes
("needs upstream rule change: ...") are printed before the summary.
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
HANG_TEST = 'kfd_queue_hang'
# The GPUs kfd_queue_hang can run on: GFX 9 with per-queue reset, which
# Linux 7.3 advertises from GC 9.4.3 (kfd_topology.c).
HANG_GC_MIN = (9, 4, 3)
HANG_GC_MAX = (10, 0, 0)
HANG_ENV = 'KFD_QUEUE_HANG_ALLOW_RESET=1'
HANG_ARG = 'amdgpu.cwsr_enable=0'
KFD_COLLECTION = 'drivers/gpu/amdkfd'


_KCONFIG = {}


class Checker:
    def __init__(self, tree):
        self.tree = tree
        self.errors = []
        self.warnings = []
        self.notes = []
        self.facts = {}
        self.hang_jobs = set()
        self.main_jobs = set()

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
        """The programs of a kselftest collection, or None if it is not one."""
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
        progs = []
        with open(mk, encoding='utf-8', errors='replace') as f:
            text = f.read().replace('\\\n', ' ')
        for m in re.finditer(r'^\s*TEST_(?:GEN_)?(?:CUSTOM_)?PROGS\s*[:+]?=\s*(.*)$', text, re.M):
            progs += [os.path.basename(p) for p in m.group(1).split()]
        return progs

    # ---------------------------------------------------------- the checks
    def check(self, cfg, upstream, fragment_lines, lava_jobs):
        if not isinstance(cfg, dict):
            self.error('the configuration is not a mapping')
            return
        for key in cfg:
            if key not in SECTIONS:
                self.error(f'unknown section "{key}" (kernelci-pipeline has {", ".join(sorted(SECTIONS))})')
        trees = self.check_trees(cfg, upstream)
        frags = self.check_fragments(cfg, upstream, fragment_lines)
        jobs = self.check_jobs(cfg, upstream, trees, frags)
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

    def check_fragments(self, cfg, upstream, fragment_lines):
        frags = self.mapping(cfg, 'fragments')
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
        kfd = frags.get('kfd')
        if not isinstance(kfd, dict):
            self.error('no fragment "kfd" (ci/config/kfd.config)')
        elif [str(c) for c in kfd.get('configs') or []] != fragment_lines:
            ours = set(str(c) for c in kfd.get('configs') or [])
            theirs = set(fragment_lines)
            diff = sorted(theirs - ours) + [f'not in ci/config/kfd.config: {c}' for c in sorted(ours - theirs)]
            self.error('fragment kfd is not ci/config/kfd.config line for line'
                       + (f': {"; ".join(diff)}' if diff else ' (order)'))
        # What the collection's own config file asks for.
        if self.tree:
            want = os.path.join(self.selftests(), KFD_COLLECTION, 'config')
            have = {}
            for line in fragment_lines:
                m = CONFIG_LINE.match(line)
                if m and m.group(1):
                    have[m.group(1)] = m.group(2)
            if os.path.isfile(want):
                with open(want, encoding='utf-8') as f:
                    for line in f:
                        m = CONFIG_LINE.match(line.strip())
                        if m and m.group(1) and have.get(m.group(1)) not in (m.group(2), 'y' if m.group(2) == 'm' else None):
                            self.error(f'ci/config/kfd.config: {KFD_COLLECTION}/config wants {m.group(1)}={m.group(2)}')
        self.facts['fragment'] = len(fragment_lines)
        return set(frags) | set(upstream.get('fragments', []))

    def check_jobs(self, cfg, upstream, trees, frags):
        jobs = self.mapping(cfg, 'jobs')
        if not jobs:
            self.error('no jobs')
        allowers = []
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
            methods = upstream.get('test_methods') or []
            tm = params.get('test_method')
            if tmpl == 'generic.jinja2':
                if not tm:
                    self.error(f'job {name}: generic.jinja2 without a test_method')
                elif tm not in methods:
                    self.error(f'job {name}: test_method {tm} is not one of generic.jinja2\'s '
                               f'({", ".join(methods)}: upstream.yaml test_methods)')
            if params.get('collections') and tm != 'kselftest':
                self.error(f'job {name}: kselftest collections, but test_method is {tm!r}, not kselftest')
            if tm == 'kselftest':
                if self.check_kselftest(name, params):
                    allowers.append(name)
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

    def check_kselftest(self, name, params):
        """Returns whether the job allows the hang."""
        cols = str(params.get('collections') or '').split()
        if not cols:
            self.error(f'job {name}: kselftest without collections')
        progs = {}
        for c in cols:
            p = self.collection_programs(c) if self.tree else []
            if p is None:
                self.error(f'job {name}: kselftest collection {c} is not in the tree '
                           '(not a TARGETS of tools/testing/selftests/Makefile with a Makefile)')
            else:
                progs[c] = p
                self.facts.setdefault('collections', {})[c] = p
        tests = str(params.get('tests') or '').split()
        for t in tests:
            col, _, prog = t.partition(':')
            if col not in progs:
                self.error(f'job {name}: test {t} is not of the job\'s collections')
            elif self.tree and prog not in progs[col]:
                self.error(f'job {name}: {t}: {prog} is not a program of {col}')
        env = str(params.get('env') or '')
        allows = HANG_ENV in env.split()
        runs_hang = any(t.endswith(':' + HANG_TEST) for t in tests)
        if allows:
            if not runs_hang or len(tests) != 1:
                self.error(f'job {name}: {HANG_ENV} only in a job that runs {HANG_TEST} alone '
                           '(the others must never reset a GPU)')
            if HANG_ARG not in str(params.get('extra_kernel_args') or '').split():
                self.error(f'job {name}: {HANG_TEST} allowed without {HANG_ARG} on the kernel command line '
                           '(it would skip)')
            if not params.get('frequency'):
                self.error(f'job {name}: a job that may reset the GPU needs a frequency limit')
        elif runs_hang and len(tests) == 1:
            self.error(f'job {name}: runs {HANG_TEST} alone without {HANG_ENV}: it would only skip')
        if allows or runs_hang:
            self.hang_jobs.add(name)
        if not tests and KFD_COLLECTION in cols:
            self.main_jobs.add(name)
        return allows

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
                if jname in self.hang_jobs:
                    gcs = (s or {}).get('gc') or []
                    bad = [g for g in gcs if not HANG_GC_MIN <= gc_tuple(g) < HANG_GC_MAX]
                    if not gcs or bad:
                        self.error(f'{where}: {p} cannot run {HANG_TEST}: GC {", ".join(bad or ["unknown"])} '
                                   f'has no per-queue reset (it needs GFX 9, GC 9.4.3 or later): '
                                   'the job would only ever skip')
                self.check_rules(where, cfg, jobs, jname, ev.get('name'), p, d, upstream)
                scheduled[jname].add(p)
        for jname, job in jobs.items():
            if not isinstance(job, dict):
                continue
            if jname not in scheduled:
                if jname in self.hang_jobs:
                    self.facts.setdefault('unscheduled', []).append(jname)
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

    # ------------------------------------------------------------ rules
    def checkouts(self, cfg):
        return [(b.get('tree'), str(b.get('branch'))) for b in self.mapping(cfg, 'build_configs').values()
                if isinstance(b, dict)]

    def kernel_version(self):
        try:
            with open(os.path.join(self.tree, 'Makefile'), encoding='utf-8') as f:
                head = f.read(2000)
            return (int(re.search(r'^VERSION = (\d+)', head, re.M).group(1)),
                    int(re.search(r'^PATCHLEVEL = (\d+)', head, re.M).group(1)))
        except (OSError, AttributeError, TypeError):
            return None

    def check_rules(self, where, cfg, jobs, jname, kbname, pname, platform, upstream):
        """Would kernelci-pipeline create the job on the platform at all?"""
        kb = jobs.get(kbname) or {}
        kbp = kb.get('params') or {}
        data = {'arch': kbp.get('arch'), 'defconfig': kbp.get('defconfig'),
                'fragments': [str(f) for f in kbp.get('fragments') or []]}
        kver = self.kernel_version() if self.tree else None
        prules = dict(platform.get('rules') or {})
        extra = (upstream.get('platform_rule_change') or {}).get(pname) or []
        changed = dict(prules)
        if extra:
            changed['branch'] = list(prules.get('branch') or []) + list(extra)
        now, later = [], []
        for tree, branch in self.checkouts(cfg):
            node = dict(data, tree=tree, branch=branch)
            if not (rules_allow(kb.get('rules'), node, kver) and rules_allow(jobs[jname].get('rules'), node, kver)):
                continue
            if rules_allow(prules, node, kver):
                now.append(f'{tree}:{branch}')
            elif rules_allow(changed, node, kver):
                later.append(f'{tree}:{branch}')
        if now:
            return
        if later:
            self.notes.append(f'needs upstream rule change: {jname} on {pname}: its platform rules '
                              f'(rules.branch {", ".join(prules.get("branch") or [])}) allow no checkout of '
                              f'kfd.yaml; with platform_rule_change ({", ".join(extra)}) it runs on '
                              f'{", ".join(later)}')
        else:
            self.error(f'{where}: {pname}: no rule allows the job on any checkout (the kbuild\'s, the job\'s '
                       f'and the platform\'s rules against build_configs '
                       f'{", ".join(f"{t}:{b}" for t, b in self.checkouts(cfg)) or "(none)"}, '
                       f'with platform_rule_change too): it would never run')

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
            with open(path, encoding='utf-8') as f:
                job = yaml.safe_load(f) or {}
            dt = job.get('device_type')
            if dt in (None, 'qemu'):
                continue
            d = platforms.get(dt)
            if d is None or not (support.get(d.get('base_name')) or {}).get('kfd'):
                self.error(f'{os.path.basename(path)}: device type {dt} is not a platform KFD supports')


def gc_tuple(gc):
    try:
        return tuple(int(x) for x in str(gc).split('.'))
    except ValueError:
        return (0,)


def _combos(rules):
    allow, allow_c, deny, deny_c = [], [], [], []
    for r in rules:
        r = str(r)
        if ':' in r:
            t, b = r.split(':', 1)
            (deny_c if t.startswith('!') else allow_c).append((t.lstrip('!'), b))
        else:
            (deny if r.startswith('!') else allow).append(r.lstrip('!'))
    return allow, allow_c, deny, deny_c


def rules_allow(rules, node, kver):
    """kernelci-pipeline's APIHelper.should_create_node, on a flat node:
    tree and branch (with tree:branch combos), version limits, then every
    other key as an allow/deny list (a list value needs one allowed item
    and no denied one)."""
    if not rules:
        return True
    for key in ('tree', 'branch'):
        if key not in rules:
            continue
        allow, allow_c, deny, deny_c = _combos(rules[key] or [])
        if (node['tree'], node['branch']) in allow_c:
            break
        if (node['tree'], node['branch']) in deny_c or node[key] in deny:
            return False
        if not allow and allow_c:
            return False
        if allow and node[key] not in allow:
            return False
    for key, val in rules.items():
        if key in ('tree', 'branch'):
            continue
        if key.endswith('_version'):
            if kver is None:
                continue
            lim = (val.get('version'), val.get('patchlevel'))
            if (key.startswith('min') and kver < lim) or (key.startswith('max') and kver > lim):
                return False
            continue
        if node.get(key) is None:
            continue
        deny = [str(v)[1:] for v in val if str(v).startswith('!')]
        allow = [str(v) for v in val if not str(v).startswith('!')]
        have = node[key]
        if isinstance(have, list):
            if any(h in deny for h in have):
                return False
            if allow and not any(h in allow for h in have):
                return False
        elif have in deny or (allow and have not in allow):
            return False
    return True


def load(path):
    with open(path, encoding='utf-8') as f:
        return yaml.safe_load(f)


def fragment_lines(path):
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
        c.check(cfg, load(upstream), fragment_lines(fragment), lava_jobs)
    except (OSError, yaml.YAMLError) as exc:
        c.error(str(exc).replace('\n', ' '))
    return c


# Broken copies for --self-test: (what, file, old, new, expected error).
BROKEN = [
    ('scheduler names an undefined job', 'config',
     '  - job: kselftest-kfd\n', '  - job: kselftest-kfd-undefined\n', 'is not defined in jobs'),
    ('grunt among the platforms', 'config',
     '      - acer-cp514-3wh-r0qs-guybrush\n', '      - acer-R721T-grunt\n      - acer-cp514-3wh-r0qs-guybrush\n',
     'KFD does not support'),
    ('a platform kernelci-pipeline does not have', 'config',
     '      - hp-x360-14a-cb0001xx-zork\n', '      - hp-x360-14a-cb0001xx-zork-nonexistent\n',
     'is not defined in kernelci-pipeline'),
    ('fragment kfd is not ci/config/kfd.config', 'config',
     "      - 'CONFIG_HSA_AMD=y'\n", '', 'is not ci/config/kfd.config'),
    ('ci/config/kfd.config without HSA_AMD', 'fragment',
     'CONFIG_HSA_AMD=y\n', '', 'is not ci/config/kfd.config'),
    ('an option the tree does not have', 'both',
     'CONFIG_HSA_AMD=y', 'CONFIG_HSA_AMD_NONEXISTENT=y', "is not an option of the tree's Kconfig"),
    ('kbuild without the kfd fragment', 'config',
     '        - kfd\n', '', 'does not merge the kfd fragment'),
    ('collection not in the tree', 'config',
     'collections: drivers/gpu/amdkfd\n', 'collections: drivers/gpu/amdkfd-nonexistent\n', 'is not in the tree'),
    ('hang test allowed without amdgpu.cwsr_enable=0', 'config',
     "      extra_kernel_args: 'amdgpu.cwsr_enable=0'\n", '', 'without amdgpu.cwsr_enable=0'),
    ('the whole collection with the hang allowed', 'config',
     "      job_timeout: 30\n", "      job_timeout: 30\n      env: 'KFD_QUEUE_HANG_ALLOW_RESET=1'\n",
     'only in a job that runs kfd_queue_hang alone'),
    ('a typo in test_method', 'config',
     '      test_method: kselftest\n', '      test_method: kselftests\n',
     'test_method kselftests is not one of'),
    ('the main job without test_method', 'config',
     '      test_method: kselftest\n', '', 'generic.jinja2 without a test_method'),
    ('the hang job without tests (the whole collection with the hang allowed)', 'config',
     "      tests: 'drivers/gpu/amdkfd:kfd_queue_hang'\n", '',
     'only in a job that runs kfd_queue_hang alone'),
    ('the hang job scheduled on a zork', 'config',
     'scheduler:\n',
     'scheduler:\n\n  - job: kselftest-kfd-queue-hang\n    event:\n      channel: node\n'
     '      kind: kbuild\n      state: available\n      name: kbuild-gcc-12-x86-chromeos-amd-kfd\n'
     '    runtime:\n      type: lava\n      name: lava-collabora\n    platforms:\n'
     '      - hp-x360-14a-cb0001xx-zork\n',
     'cannot run kfd_queue_hang: GC 9.1.0, 9.2.2 has no per-queue reset'),
    ('the main job not on every supported platform', 'config',
     '      - lenovo-TPad-C13-Yoga-zork\n', '',
     'not scheduled on lenovo-TPad-C13-Yoga-zork'),
    ('a platform whose rules allow no checkout even with the rule change', 'upstream',
     "  hp-x360-14a-cb0001xx-zork: ['kseries:series']\n", '',
     'hp-x360-14a-cb0001xx-zork: no rule allows the job'),
    ('not YAML', 'config', 'scheduler:\n', 'scheduler: [\n', 'does not parse as YAML'),
]


def self_test(args):
    """Each broken copy must be rejected with its error."""
    with open(args.config, encoding='utf-8') as f:
        config_text = f.read()
    with open(args.fragment, encoding='utf-8') as f:
        fragment_text = f.read()
    with open(args.upstream, encoding='utf-8') as f:
        upstream_text = f.read()
    failures = []
    with tempfile.TemporaryDirectory(prefix='kfd-kernelci-') as tmp:
        for what, which, old, new, expect in BROKEN:
            cfg, frag, up = config_text, fragment_text, upstream_text
            if which in ('config', 'both'):
                if old not in cfg:
                    failures.append(f'self-test: cannot break the copy ({what}): "{old.strip()}" not in {args.config}')
                    continue
                cfg = cfg.replace(old, new, 1)
            if which in ('fragment', 'both'):
                if old not in frag:
                    failures.append(f'self-test: cannot break the copy ({what}): "{old.strip()}" not in {args.fragment}')
                    continue
                frag = frag.replace(old, new, 1)
            if which == 'upstream':
                if old not in up:
                    failures.append(f'self-test: cannot break the copy ({what}): "{old.strip()}" not in {args.upstream}')
                    continue
                up = up.replace(old, new, 1)
            cpath, fpath = os.path.join(tmp, 'kfd.yaml'), os.path.join(tmp, 'kfd.config')
            upath = os.path.join(tmp, 'upstream.yaml')
            for path, text in ((cpath, cfg), (fpath, frag), (upath, up)):
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(text)
            c = validate(cpath, upath, fpath, args.tree, args.lava_jobs)
            if not c.errors:
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
    ap.add_argument('--self-test', action='store_true', help='also check that broken copies are rejected')
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
    summary = (f'{os.path.relpath(args.config, os.path.dirname(CI))}: valid: {c.facts.get("jobs")} jobs, '
               f'{c.facts.get("scheduler")} scheduler entries, platforms {", ".join(c.facts.get("platforms", []))} '
               f'(not grunt); fragment kfd = ci/config/kfd.config ({c.facts.get("fragment")} options'
               f'{", in the Kconfig of the tree" if args.tree else ""})')
    if c.facts.get('unscheduled'):
        summary += (f'; not scheduled: {", ".join(c.facts["unscheduled"])} (no KernelCI platform has a GPU '
                    f'that can run {HANG_TEST})')
    if c.notes:
        plats = sorted(set(re.search(r' on (\S+): ', n).group(1) for n in c.notes))
        summary += (f'; NOT SCHEDULABLE YET: the platform rules of kernelci-pipeline allow no kseries '
                    f'checkout on {", ".join(plats)}: needs upstream rule change (upstream.yaml '
                    f'platform_rule_change, ci/README.md)')
    for col, progs in cols.items():
        summary += f'; {col}: {" ".join(progs)}'
    if args.self_test:
        summary += f'; {len(BROKEN)} broken copies rejected'
    print(summary)
    return 0


if __name__ == '__main__':
    sys.exit(main())

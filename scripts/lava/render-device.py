#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render a LAVA device dictionary into the device configuration lava-run
reads, as lava-server does: the dictionary extends a device-type template
(device-types/*.jinja2 of the lava-server package of the same version as
the dispatcher), rendered with the job's context.  Then check that the job
fits the device: each deploy's "to" and each boot's method (and its
"commands", for bootloaders) are methods the device has.

    render-device.py DEVICE_TYPES_DIR DICTIONARY|- JOB.yaml > DEVICE.yaml

With "-" instead of a dictionary, a lab's device of the job's device_type
is stood for by a dictionary that only extends the device type.
"""

import os
import sys

import jinja2
import yaml


def fits(device, job):
    """What of the job the device cannot do."""
    errors = []
    deploy = (device.get('actions') or {}).get('deploy', {}).get('methods') or {}
    boot = (device.get('actions') or {}).get('boot', {}).get('methods') or {}
    for action in job.get('actions') or []:
        for kind, params in action.items():
            if kind == 'deploy':
                to = params.get('to')
                if to == 'tmpfs':
                    to = 'image'
                if to not in deploy:
                    errors.append(f'deploy to {params.get("to")}: the device deploys with {", ".join(deploy)}')
            elif kind == 'boot':
                method = params.get('method')
                if method not in boot:
                    errors.append(f'boot method {method}: the device boots with {", ".join(boot)}')
                    continue
                commands = params.get('commands')
                if isinstance(commands, str) and not (boot[method] or {}).get(commands):
                    errors.append(f'boot {method} commands {commands}: the device has '
                                  f'{", ".join(k for k in (boot[method] or {}) if k != "parameters")}')
    return errors


def main():
    types_dir, dictionary, job_file = sys.argv[1:4]
    with open(job_file, encoding='utf-8') as f:
        job = yaml.safe_load(f)
    context = job.get('context', {}) or {}
    dirs = [types_dir]
    if dictionary == '-':
        source = jinja2.DictLoader({'device.jinja2': "{%% extends '%s.jinja2' %%}\n" % job['device_type']})
        loader, name = jinja2.ChoiceLoader([source, jinja2.FileSystemLoader(dirs)]), 'device.jinja2'
    else:
        dirs.insert(0, os.path.dirname(os.path.abspath(dictionary)))
        loader, name = jinja2.FileSystemLoader(dirs), os.path.basename(dictionary)
    env = jinja2.Environment(loader=loader, trim_blocks=True, autoescape=False)
    try:
        text = env.get_template(name).render(**context)
    except jinja2.TemplateNotFound as exc:
        sys.exit(f'render-device.py: no device-type template {exc}')
    data = yaml.safe_load(text) or {}
    missing = [k for k in ('actions', 'constants', 'timeouts') if k not in data]
    if missing:
        sys.exit(f'render-device.py: {dictionary}: the rendered device lacks {", ".join(missing)}')
    errors = fits(data, job)
    if errors:
        sys.exit(f'render-device.py: {os.path.basename(job_file)} does not fit the device: ' + '; '.join(errors))
    sys.stdout.write(text)


if __name__ == '__main__':
    main()

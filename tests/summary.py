#!/usr/bin/env python3
"""Print "N passed, N failed, N skipped" over meson testlog.json files.

TAP tests count per subtest (meson's testlog.json keeps their stdout); a
test that meson failed with no failing subtest (crash, bail out, missing
plan) counts as one more failure, as do subtests its plan announced but
never reported. Each test that failed is named just above that line, with
its failing subtests (a CI log is often read from its end only). Exit
status 1 if anything failed.
"""
import argparse
import json
import os
import re
import sys

TAP_LINE = re.compile(r'^(not ok|ok)\b[^#]*(?:#\s*(\w+))?', re.IGNORECASE)
TAP_PLAN = re.compile(r'^1\.\.(\d+)')


def why_failed(comments):
    """What a failed subtest printed about its failure: its FAIL lines (the
    testbed's tb_fail) or, without any, its last comment lines."""
    fails = [c for c in comments if '] FAIL: ' in c]
    return (fails or comments)[-5:]


def count_test(t, tot, report):
    lines = (t.get('stdout') or '').splitlines()
    plan, seen, passed, failed, skipped = None, 0, 0, 0, 0
    not_ok = []
    section = []        # comment lines since the last subtest's verdict
    for line in lines:
        if line.startswith('#'):
            section.append(line)
            continue
        m = TAP_PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = TAP_LINE.match(line)
        if not m:
            continue
        seen += 1
        ok = m.group(1).lower() == 'ok'
        directive = (m.group(2) or '').upper()
        if directive == 'SKIP':
            skipped += 1
        elif directive == 'TODO' or ok:
            passed += 1
        else:
            failed += 1
            not_ok.append(line)
            not_ok.extend('  ' + c for c in why_failed(section))
        section = []
    result = t.get('result', 'ERROR')
    name = t.get('name', '?')
    if plan is None and seen == 0:
        # Not TAP: one verdict.
        if result in ('OK', 'EXPECTEDFAIL'):
            tot['passed'] += 1
        elif result == 'SKIP':
            tot['skipped'] += 1
        else:
            tot['failed'] += 1
            report.append(f'FAILED: {name} ({result})')
        return
    if plan is not None and seen < plan:
        failed += plan - seen
        not_ok.append(f'(its plan announced {plan} subtests, {seen} reported)')
    if result not in ('OK', 'EXPECTEDFAIL', 'SKIP') and failed == 0:
        failed += 1
        not_ok.append(f'(every subtest passed, but the test ended {result})')
    if failed:
        report.append(f'FAILED: {name} ({result}, {failed} failed)')
        report.extend('    ' + line[:500] for line in not_ok[:40])
        if len(not_ok) > 40:
            report.append(f'    ... and {len(not_ok) - 40} more')
    tot['passed'] += passed
    tot['failed'] += failed
    tot['skipped'] += skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--failed', type=int, default=0,
                    help='failures from steps that ran no test (builds)')
    ap.add_argument('logs', nargs='*')
    args = ap.parse_args()
    tot = {'passed': 0, 'failed': args.failed, 'skipped': 0}
    report = []
    if args.failed:
        report.append(f'FAILED: {args.failed} step(s) before any test (see "==> ... FAILED" above)')
    for path in args.logs:
        if not os.path.exists(path):
            report.append(f'FAILED: {path} missing: meson test did not run')
            tot['failed'] += 1
            continue
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                if line.strip():
                    count_test(json.loads(line), tot, report)
    for line in report:
        print(line)
    print(f"{tot['passed']} passed, {tot['failed']} failed, {tot['skipped']} skipped")
    return 1 if tot['failed'] else 0


if __name__ == '__main__':
    sys.exit(main())

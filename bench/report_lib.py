# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""What the report scripts of bench/ share (imported from their directory):
the median that skips missing values, number formatting, reading a run's
JSON, the `key=value` meta file of a raw directory, the options of the
wait-strategies reports and the replacement of a marked section of
RESULTS.md."""
import argparse
import json
import math
import os
import re
import statistics
import sys


def med(xs):
    """The median of the values that are there (None and NaN left out)."""
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else None


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def load_json(path):
    """The document at path, or None (missing, unreadable, not JSON)."""
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        return None


def read_meta(raw):
    """raw/meta: one key=value a line."""
    meta = {}
    for ln in open(os.path.join(raw, "meta")):
        k, _, v = ln.rstrip("\n").partition("=")
        meta[k] = v
    return meta


def wait_args():
    """--raw DIR --results DIR [--md FILE] [--partial]"""
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--md")
    ap.add_argument("--partial", action="store_true")
    return ap.parse_args()


def update_section(md, begin, end, text, after=None):
    """Put text between the markers begin and end of the file md: replace
    the section, or add it after the line `after` (when there) or at the
    end."""
    section = begin + "\n" + text.rstrip("\n") + "\n" + end + "\n"
    try:
        cur = open(md).read()
    except FileNotFoundError:
        cur = ""
    if begin in cur and end in cur:
        new = re.sub(re.escape(begin) + ".*?" + re.escape(end) + "\n?", lambda _: section, cur,
                     flags=re.S)
    elif after and after + "\n" in cur:
        new = cur.replace(after + "\n", after + "\n\n" + section, 1)
    else:
        new = cur.rstrip("\n") + "\n\n" + section
    with open(md, "w") as f:
        f.write(new)
    print("\n%s: section between %s and %s updated" % (md, begin, end), file=sys.stderr)

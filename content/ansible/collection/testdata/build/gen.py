#!/usr/bin/env python3
"""Makes the golden outputs of Build's tests with the real tools (see README.md).

    python3 -m venv /tmp/acb && /tmp/acb/bin/pip install 'ansible-core==2.19.*' distlib
    /tmp/acb/bin/python gen.py

For each case of cases.json it lays the source tree out in a temporary directory, runs
`ansible-galaxy collection build` on it (with os.listdir sorted, as Build reads a
directory) and writes golden/<case>/: MANIFEST.json and FILES.json as built,
members.txt (one tar member a line), warnings.txt, or error.txt when the build fails.
Then globs.json: random patterns and paths with what Python's fnmatch and distlib's
Manifest say of them.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile

import ansible
from distlib.manifest import Manifest

HERE = os.path.dirname(os.path.abspath(__file__))

# ansible-galaxy walks directories in os.listdir's order, which is the file system's.
WRAPPER = """
import os, sys
_listdir = os.listdir
os.listdir = lambda p='.': sorted(_listdir(p))
from ansible.cli.galaxy import main
sys.argv[0] = 'ansible-galaxy'
sys.exit(main())
"""


def lay_out(root, files):
    for name, spec in sorted(files.items()):
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(spec, str):
            spec = {"body": spec}
        if spec.get("dir"):
            os.makedirs(p, exist_ok=True)
        elif "link" in spec:
            os.symlink(spec["link"], p)
        else:
            with open(p, "w", encoding="utf-8") as f:
                f.write(spec["body"])
            os.chmod(p, 0o755 if spec.get("exec") else 0o644)


def build(case, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src", "collection")
        os.makedirs(src)
        lay_out(src, case["files"])
        dest = os.path.join(tmp, "out")
        r = subprocess.run([sys.executable, "-c", WRAPPER, "collection", "build", "--output-path", dest, src],
                           capture_output=True, text=True, env={**os.environ, "ANSIBLE_NOCOLOR": "1"})
        warnings = [l for l in (r.stdout + r.stderr).splitlines() if l.startswith("[WARNING]")]
        with open(os.path.join(out, "warnings.txt"), "w") as f:
            f.write("".join(w.replace(tmp, "<tmp>") + "\n" for w in warnings))
        if r.returncode != 0:
            err = [l for l in r.stderr.splitlines() if l.startswith("ERROR")] or r.stderr.splitlines()[-1:]
            with open(os.path.join(out, "error.txt"), "w") as f:
                f.write(err[0].replace(tmp, "<tmp>") + "\n")
            return
        (tarball,) = os.listdir(dest)
        with tarfile.open(os.path.join(dest, tarball)) as t:
            for name in ("MANIFEST.json", "FILES.json"):
                with open(os.path.join(out, name), "wb") as f:
                    f.write(t.extractfile(name).read())
            with open(os.path.join(out, "members.txt"), "w", encoding="utf-8") as f:
                for m in t.getmembers():
                    f.write("\t".join([m.name, m.type.decode(), oct(m.mode), str(m.uid), str(m.gid), m.uname,
                                       m.gname, m.linkname, str(m.size), "mtime0" if m.mtime == 0 else "mtime"]) + "\n")


def globs():
    rnd = random.Random(16)
    pat_alpha = ["a", "b", "x", ".", "/", "*", "*", "?", "[", "]", "!", "-", "^", "\\", "|", "é"]
    name_alpha = ["a", "b", "x", ".", "/", "/", "-", "]", "[", "!", "^", "\\", "|", "é"]
    cases = []
    base = "/B0"  # a directory name no pattern or path here spells
    for _ in range(500):
        pat = "".join(rnd.choice(pat_alpha) for _ in range(rnd.randint(1, 8)))
        names = ["".join(rnd.choice(name_alpha) for _ in range(rnd.randint(1, 8))) for _ in range(4)]
        for _ in range(4):  # names like the pattern, so that some match
            n = ""
            for c in pat:
                if c == "*":
                    n += "".join(rnd.choice(name_alpha) for _ in range(rnd.randint(0, 3)))
                elif c in "?[]" and rnd.random() < 0.7:
                    n += rnd.choice(name_alpha)
                else:
                    n += c
            names.append(n)
        names = [n.strip("/").replace("//", "/") or "a" for n in names]
        case = {"pattern": pat, "names": names}
        import fnmatch
        try:
            case["fnmatch"] = [fnmatch.fnmatch(n.encode(), pat.encode()) for n in names]
        except Exception as e:  # Python fails on some sets
            case["fnmatch_error"] = type(e).__name__
        m = Manifest(base)
        for kind, kw in (("anchored", dict(anchor=True)), ("prefix", dict(prefix="a*")),
                         ("prefixed", dict(prefix=pat, pattern=None))):
            try:
                kwargs = dict(kw)
                p = kwargs.pop("pattern", pat)
                r = m._translate_pattern(p, **kwargs)
                case[kind] = [bool(r.search(base + "/" + n)) for n in names]
            except Exception as e:
                case[kind + "_error"] = type(e).__name__
        try:
            r = Manifest("/")._translate_pattern(pat, anchor=False)
            case["global"] = [bool(r.search("/" + n)) for n in names]
        except Exception as e:
            case["global_error"] = type(e).__name__
        cases.append(case)
    with open(os.path.join(HERE, "globs.json"), "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]\n")


def main():
    with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    for case in cases:
        build(case, os.path.join(HERE, "golden", case["name"]))
    with open(os.path.join(HERE, "golden", "VERSION"), "w") as f:
        f.write("ansible-core %s, Python %s\n" % (ansible.__version__, sys.version.split()[0]))
    globs()


if __name__ == "__main__":
    main()

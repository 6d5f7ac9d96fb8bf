#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, made from the bundled files at run time.

Usage: make_seeds.py SOURCE_DIR OUT_DIR
Writes OUT_DIR/<target>/<name> for each target of tests/fuzz:
  experiment       workloads/experiments/*.yaml as they are, the same with the model and
                   cluster files inlined (so the fuzzer reaches the model and cluster
                   decoders without file references), and tests/fuzz/seeds/experiment/*
  set              tests/fuzz/seeds/set/* (first line: base experiment; then --set args)
  sweep            workloads/sweeps/*.yaml as they are and with the base inlined
  import_hf        tests/fixtures/hf/*.json
  import_megatron  tests/fuzz/seeds/megatron/*
  import_maxtext   each workloads/maxtext/*.args with its base config (and the A3 row's
                   model config): base YAML, "%%", model YAML, "%%", KEY=VALUE lines;
                   and tests/fuzz/seeds/maxtext/*
and OUT_DIR/<target>.dict, a libFuzzer dictionary: the string literals of the sources
that read that format (keys, enum names, flags) plus YAML/JSON syntax and boundary numbers.
Inlining is textual (no YAML library): a `model: PATH` line becomes `model:` followed by
the file's non-comment lines indented two spaces further (likewise cluster and base).
"""
import pathlib
import re
import shutil
import sys


def strip_comments(text):
    return [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def inline(text, folder, keys):
    """Replaces `KEY: PATH` lines (KEY in keys) by the file's lines, indented below KEY."""
    out = []
    for line in strip_comments(text):
        m = re.match(r"^( *)(\w+):\s*([^\s{\[#]\S*)\s*(#.*)?$", line)
        if m and m.group(2) in keys:
            path = (folder / m.group(3)).resolve()
            body = keys[m.group(2)](path.read_text(), path.parent)
            out.append(m.group(1) + m.group(2) + ":")
            out.extend(m.group(1) + "  " + l for l in body)
        else:
            out.append(line)
    return out


def inline_experiment(text, folder):
    plain = lambda t, _: strip_comments(t)
    return inline(text, folder, {"model": plain, "cluster": plain})


# Numbers at the edges of int, int64 and double, and other troublesome scalars.
EDGES = ["0", "-1", "1", "2", "3", "7", "8", "1024", "65535", "2147483647", "2147483648",
         "-2147483648", "4294967296", "1099511627776", "9223372036854775807",
         "9223372036854775808", "1e308", "1e-308", "0.5", ".nan", ".inf", "0x10", "~", "null",
         "true", "false", "auto"]
SYNTAX = {"yaml": [": ", "- ", "{", "}", "[", "]", ", ", "&a ", "*a", "!!str ", "<<: ", "---",
                   "|\n", "\n  ", "#", "'", '"'],
          "json": ["{", "}", "[", "]", ":", ",", '"', "null", "true", "false", "-0", "1.5e10"],
          "args": [" ", "=", "'", '"', "\\\n", "[0]*3+[1]*5", "([1,0]*4)"]}
DECODERS = ["sim/config/decode.cc", "sim/config/decode_model.cc",
            "sim/config/decode_cluster.cc"]
DICT_SOURCES = {
    "experiment": ("yaml", DECODERS + ["sim/config/loader.cc"]),
    "set": ("yaml", DECODERS + ["sim/config/loader.cc"]),
    "sweep": ("yaml", DECODERS + ["sim/config/sweep_loader.cc", "sim/sweep/enumerate.cc"]),
    "import_hf": ("json", ["sim/config/import_hf.cc"]),
    "import_megatron": ("args", ["sim/config/megatron_args.cc", "sim/config/import_megatron.cc"]),
    "import_maxtext": ("yaml", ["sim/config/import_maxtext.cc", "sim/config/maxtext_mesh.cc"]),
}


def dict_entry(word):
    """A libFuzzer dictionary line: the word in double quotes, escaped as C would."""
    body = "".join("\\" + c if c in '"\\' else c if " " <= c <= "~" else "\\x%02x" % ord(c)
                   for c in word)
    return '"' + body + '"'


def write_dict(src, target, path):
    syntax, files = DICT_SOURCES[target]
    words = set(EDGES + SYNTAX[syntax])
    for f in files:
        words.update(re.findall(r'"([-a-z0-9_.]{2,40})"', (src / f).read_text()))
    if target == "set":
        words.update(["plan.", "model.", "cluster.", "training.", "=", "\n"])
    if target == "import_maxtext":
        words.update(["%%\n", "=", "\n", "_parallelism=", "ici_", "dcn_"])
    path.write_text("".join(dict_entry(w) + "\n" for w in sorted(words)))


def copy_all(files, dest):
    for f in files:
        shutil.copyfile(f, dest / f.name)


def write_maxtext_seeds(folder, dest):
    """One seed per bundled MaxText run: base, model (A3 only), overrides."""
    for args in sorted(folder.glob("*.args")):
        a3 = args.name.startswith("a3-")
        base = (folder / ("base-efb6d9e4.yml" if a3 else "base-76bd53b0.yml")).read_text()
        model = (folder / "models" / "llama2-7b.yml").read_text() if a3 else ""
        words = [w for w in strip_comments(args.read_text()) if not w.startswith("model_name=")]
        (dest / (args.stem + ".txt")).write_text(
            base + "%%\n" + model + "%%\n" + "\n".join(words) + "\n")


def main():
    src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    seeds = src / "tests" / "fuzz" / "seeds"
    dirs = {t: out / t for t in ["experiment", "set", "sweep", "import_hf", "import_megatron",
                                 "import_maxtext"]}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)

    experiments = sorted((src / "workloads" / "experiments").glob("*.yaml"))
    copy_all(experiments, dirs["experiment"])
    for f in experiments:
        lines = inline_experiment(f.read_text(), f.parent)
        (dirs["experiment"] / ("inline-" + f.name)).write_text("\n".join(lines) + "\n")
    copy_all(sorted((seeds / "experiment").iterdir()), dirs["experiment"])

    sweeps = sorted((src / "workloads" / "sweeps").glob("*.yaml"))
    copy_all(sweeps, dirs["sweep"])
    for f in sweeps:
        plain = lambda t, _: strip_comments(t)
        keys = {"base": inline_experiment, "model": plain, "cluster": plain}
        lines = inline(f.read_text(), f.parent, keys)
        (dirs["sweep"] / ("inline-" + f.name)).write_text("\n".join(lines) + "\n")

    copy_all(sorted((src / "tests" / "fixtures" / "hf").glob("*.json")), dirs["import_hf"])
    copy_all(sorted((seeds / "set").iterdir()), dirs["set"])
    copy_all(sorted((seeds / "megatron").iterdir()), dirs["import_megatron"])
    write_maxtext_seeds(src / "workloads" / "maxtext", dirs["import_maxtext"])
    copy_all(sorted((seeds / "maxtext").iterdir()), dirs["import_maxtext"])
    for target in dirs:
        write_dict(src, target, out / (target + ".dict"))


if __name__ == "__main__":
    main()

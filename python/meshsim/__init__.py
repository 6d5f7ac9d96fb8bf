"""meshsim from Python: simulate training steps, sweep plans and ask the planner without
writing YAML files or parsing the CLI's output.

The module is the same C++ library as the ``meshsim`` command (a pybind11 extension,
``meshsim._meshsim``); nothing of the simulator is written again in Python, so every
number equals the CLI's. The GIL is released while meshsim loads, simulates and sweeps,
so Python threads run simulations in parallel.

    import meshsim
    s = meshsim.run("workloads/experiments/default.yaml")
    s.step_time_s, s.mfu, s.memory_breakdown_gib.activations

    e = meshsim.load_experiment("workloads/experiments/default.yaml", {"plan.tp": 4, "plan.dp": 4})
    df = meshsim.sweep(e, axes={"plan.zero": [0, 1, 3], "plan.pp": "auto"}, threads=4)
    front = meshsim.pareto(df)

    verdicts = meshsim.plan("workloads/models/llama2-70b.yaml", 64, "topologies/dgx-h100.yaml")
    model = meshsim.import_hf({"model_type": "llama", ...})

Experiments, sweeps and models may be files (paths) or dicts in the YAML files' schema
(docs/yaml.md); overrides are ``{dotted key: value}`` as ``meshsim run --set``. Bad input
raises ``InputError`` (a ValueError) with ``file``, ``line``, ``column``, ``key`` and
``message``: the same message as the CLI's. See docs/python.md.
"""
import json
import os
from collections.abc import Mapping

from . import _meshsim as _native
from ._errors import InputError, InternalError, IoError, _format, _relocated
from ._types import Experiment, Group, Model, Summary

__version__ = _native.version
__all__ = [
    "load_experiment", "run", "sweep", "pareto", "rank", "plan", "import_hf",
    "result_columns", "Experiment", "Summary", "Model", "Group", "InputError", "IoError",
    "InternalError", "__version__",
]

_DICT = "<dict>"    # how errors name an experiment, sweep or config given as a dict
_SWEEP = "<sweep>"  # ... and the sweep that sweep(experiment, axes=...) composes


# ----------------------------------------------------------------------------------------
# Conversions

def _json_default(o):
    if isinstance(o, Model):
        return o.to_dict()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    if isinstance(o, Mapping):
        return dict(o)
    if isinstance(o, (tuple, set, frozenset)):
        return list(o)
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    raise TypeError(f"meshsim: cannot write {o!r} ({type(o).__name__}) as YAML")


def _yaml_text(value):
    """A Python value as YAML text (JSON is YAML)."""
    return json.dumps(value, default=_json_default)


def _sets(overrides):
    """{dotted key: value} -> ["key=VALUE", ...] as ``--set`` takes them. A str value is
    YAML text as on the command line ("selective", "{nodes: 2}"); any other value is
    written as YAML (numbers, booleans, lists, dicts)."""
    if overrides is None:
        return []
    if not isinstance(overrides, Mapping):
        raise TypeError("meshsim: overrides must be a mapping of dotted keys to values, "
                        f"not {type(overrides).__name__}")
    out = []
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise TypeError(f"meshsim: override keys are dotted strings like 'plan.tp', not {key!r}")
        out.append(f"{key}={value if isinstance(value, str) else _yaml_text(value)}")
    return out


def _pseudo_path(name, base_dir):
    """The path a dict stands for: relative paths inside it resolve against base_dir
    (default: the working directory)."""
    return os.path.join(os.fspath(base_dir), name) if base_dir is not None else name


def _call(function, *args, pseudo=None, shown=None):
    """Calls the native ``function``; errors that name ``pseudo`` (text meshsim
    generated from a dict) are renamed ``shown`` and lose their line and column."""
    try:
        return function(*args)
    except (InputError, IoError, InternalError) as e:
        if pseudo is not None and e.file == pseudo:
            raise _relocated(e, shown, drop_position=True) from None
        raise


def _pandas(as_frame):
    if as_frame is False:
        return None
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return None
    return pandas


def _rows(columns, rows, as_frame):
    pandas = _pandas(as_frame)
    if pandas is not None:
        return pandas.DataFrame.from_records(rows, columns=columns)
    return [dict(zip(columns, r)) for r in rows]


def _argument_error(key, message):
    return InputError(_format("", 0, 0, key, message), key=key, message=message)


def _threads(threads):
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise _argument_error("threads", f"expected a number >= 1 or None, found {threads!r}")
    return threads


# ----------------------------------------------------------------------------------------
# Experiments

def load_experiment(source, overrides=None, *, base_dir=None):
    """Loads, resolves and checks an experiment, as ``meshsim run`` and ``validate`` do.

    ``source``: a path to an experiment YAML file; a dict in the same schema (docs/yaml.md:
    ``name``, ``model`` and ``cluster`` as paths or mappings, ``plan``, ``training``, ...;
    a ``meshsim.Model`` may stand for a model mapping); or an ``Experiment`` (loaded
    again from its source, its overrides first).

    ``overrides``: ``{dotted key: value}``, each applied as ``--set key=value``
    (``{"plan.tp": 4, "cluster.nodes": 2, "plan.recompute": "full"}``); a str value is
    YAML text, as on the command line.

    ``base_dir``: for a dict, the folder its relative paths resolve against (default: the
    working directory); a file's relative paths resolve against the file's folder.

    Raises ``InputError`` for bad input, with the CLI's message: the file, line and
    column where there is one (a dict's errors name ``<dict>`` and the dotted key, without
    a line), an override's errors name ``--set key=value``.
    """
    sets = _sets(overrides)
    if isinstance(source, Experiment):
        return _load(source._source, source._sets + sets)
    if isinstance(source, Mapping):
        path = _pseudo_path(_DICT, base_dir)
        return _load(("dict", _yaml_text(source), path), sets)
    if isinstance(source, (str, os.PathLike)):
        return _load(("file", os.fspath(source)), sets)
    raise TypeError("meshsim.load_experiment: expected a path, a dict or an Experiment, "
                    f"not {type(source).__name__}")


def _load(src, sets):
    if src[0] == "file":
        handle = _call(_native.load_experiment_file, src[1], sets)
    else:
        handle = _call(_native.load_experiment_text, src[1], src[2], sets, pseudo=src[2], shown=_DICT)
    return Experiment(handle, src, sets)


def run(experiment, trace=None, full_replay=False, *, overrides=None, trace_ranks=None,
        reproducible=False):
    """Simulates one training step, as ``meshsim run``; returns a ``Summary``.

    ``experiment``: an ``Experiment``, or anything ``load_experiment`` takes (a path or a
    dict), with ``overrides`` applied.

    ``trace``: None (no trace), or a path to write the Chrome trace to (a name ending in
    ``.gz`` is written gzip-compressed). ``trace_ranks``: the GPUs it shows: None for
    ``meshsim run``'s default (every GPU up to 8, else one per pipeline stage), ``"all"``,
    or a list of ranks.

    ``full_replay``: replay every rank rather than one pipeline per symmetry class (the
    results are the same; it is slower).

    ``reproducible``: write the host timings (``sim.wall_s``, ``sim.events_per_s``,
    ``sim.peak_rss_mib``) as 0, as ``--reproducible`` does.

    A plan that does not fit in memory is not an error: the summary says ``fits`` False.
    Raises ``InputError`` for bad input, ``IoError`` when the trace cannot be written.
    """
    if not isinstance(experiment, Experiment) or overrides:
        experiment = load_experiment(experiment, overrides)
    options = _native.RunOptions()
    options.trace = os.fspath(trace) if trace is not None else ""
    options.full_replay = bool(full_replay)
    options.reproducible = bool(reproducible)
    if isinstance(trace_ranks, str):
        if trace_ranks != "all":
            raise _argument_error("trace_ranks", f"expected 'all' or a list of ranks, found '{trace_ranks}'")
        options.all_ranks = True
    elif trace_ranks is not None:
        options.trace_ranks = [int(r) for r in trace_ranks]
    scalars, json_text = _native.run(experiment._handle, options)
    return Summary(scalars, json_text)


# ----------------------------------------------------------------------------------------
# Sweeps

def sweep(sweep_or_experiment, axes=None, threads=None, *, overrides=None, name=None,
          base_dir=None, as_frame=None):
    """Evaluates every configuration of a sweep, as ``meshsim sweep``; returns its rows.

    Either a sweep: ``sweep_or_experiment`` is a sweep YAML path or a dict in the sweep
    schema (``name``, ``base``, ``axes``; docs/yaml.md), and ``axes`` is None. Or an
    experiment (an ``Experiment``, a path or a dict) and ``axes``: ``{dotted key: [values]
    or "auto"}``, e.g. ``{"plan.tp": [1, 2, 4, 8], "plan.pp": "auto", "plan.zero": [0, 1,
    3]}``; the sweep is named ``name`` (default: the experiment's name). ``overrides``
    apply to the base experiment before the axes, in either case.

    ``threads``: worker threads (None: one per core). The rows do not depend on it.

    Returns one row per configuration, in configuration order, with exactly the columns
    of the CLI's results.csv (``meshsim.result_columns``): config, status (ok | oom |
    invalid | error), the non-plan axes, the plan columns, the memory bound (est_*_gib)
    and budget_gib, the summary's scalars (None where not simulated) and message. Values
    are typed (int, float, bool, str). A ``pandas.DataFrame`` when pandas is installed
    (``as_frame=None``) or asked for (``as_frame=True``), else (``as_frame=False``) a
    list of dicts.
    """
    loaded = _load_sweep(sweep_or_experiment, axes, overrides, name, base_dir)
    columns, rows = _native.evaluate_sweep(loaded, _threads(threads))
    return _rows(columns, rows, as_frame)


def _load_sweep(source, axes, overrides, name, base_dir):
    sets = _sets(overrides)
    if axes is None:
        if isinstance(source, Experiment):
            raise TypeError("meshsim.sweep: an experiment needs axes={dotted key: [values] or 'auto'}")
        if isinstance(source, Mapping):
            path = _pseudo_path(_DICT, base_dir)
            return _call(_native.load_sweep_text, _yaml_text(source), path, sets, pseudo=path, shown=_DICT)
        return _native.load_sweep_file(os.fspath(source), sets)
    if not isinstance(axes, Mapping):
        raise TypeError(f"meshsim.sweep: axes must be a mapping, not {type(axes).__name__}")
    experiment = source if isinstance(source, Experiment) else load_experiment(source, base_dir=base_dir)
    spec = {"name": name or experiment.name, "axes": dict(axes)}
    kind = experiment._source[0]
    if kind == "file":
        folder, spec["base"] = os.path.split(experiment._source[1])
    else:
        folder = os.path.dirname(experiment._source[2])
        spec["base"] = json.loads(experiment._source[1])
    path = os.path.join(folder, _SWEEP)
    return _call(_native.load_sweep_text, _yaml_text(spec), path, experiment._sets + sets,
                 pseudo=path, shown=_SWEEP)


def result_columns(axis_keys=()):
    """The columns of a sweep's rows (results.csv's header) for these non-plan axes."""
    return list(_native.result_columns(list(axis_keys)))


def _records(rows):
    """(pandas or None, columns, list of value lists) of sweep rows."""
    if hasattr(rows, "itertuples") and hasattr(rows, "columns"):
        return list(rows.columns), [list(r) for r in rows.itertuples(index=False, name=None)]
    rows = list(rows)
    columns = list(rows[0].keys()) if rows else []
    return columns, [[r[c] for c in columns] for r in rows]


def _select(rows, front):
    columns, records = _records(rows)
    if not records:
        return rows.iloc[[]] if hasattr(rows, "iloc") else []
    indices = _native.rank_rows(columns, records, front)
    if hasattr(rows, "iloc"):
        return rows.iloc[indices]
    rows = list(rows)
    return [rows[i] for i in indices]


def pareto(rows):
    """The Pareto front of step time against peak memory, as ``meshsim sweep`` prints it
    and writes pareto.csv: the rows with status ok that no other ok row beats on both
    (at least as good on both, better on one), fastest first. ``rows``: sweep or planner
    rows (a DataFrame or a list of dicts, with their columns); returns the same kind."""
    return _select(rows, front=True)


def rank(rows):
    """The rows with status ok, fastest first (ties: less memory, then lower config), as
    ``meshsim sweep`` ranks them. Same input and output as ``pareto``."""
    return _select(rows, front=False)


# ----------------------------------------------------------------------------------------
# The planner and importers

def plan(model, gpus, cluster, budget_gib=None, *, headroom_gib=0.0, global_batch=0,
         jax=False, overrides=None, threads=None, include_invalid=False, as_frame=None):
    """The device-mesh planner, as ``meshsim plan``: every TP x PP x DP split of ``gpus``
    GPUs with ZeRO 0-3 (and, for a MoE model, every expert-parallel degree dividing tp x dp
    and the experts) for ``model`` on ``cluster`` (resized to ``gpus`` GPUs), each
    checked against the memory bound and simulated where it may fit.

    ``model``: a model YAML path, a model mapping (dict) or a ``meshsim.Model``.
    ``cluster``: a cluster YAML path. ``budget_gib``: memory per GPU (None: the GPU's);
    ``headroom_gib`` of it is kept free. ``global_batch``: 0 for the planner's default
    (the smallest multiple of ``gpus`` >= 64). ``jax``: JAX-style plans instead, as
    ``meshsim plan --jax`` (a mesh of stage, data and tensor axes over every ICI x DCN
    split, with the weights replicated or FSDP over data). ``overrides``: dotted keys over
    the planner's experiment (not the axes it varies: plan.tp, pp, dp, ep, zero; with ``jax``
    nothing under plan.mesh or plan.rules).

    Returns the planner's verdicts, as ``meshsim plan`` lists them: the valid plans, those
    that fit (status ok) fastest first, then those that do not (oom) least memory first;
    with ``include_invalid``, then the invalid splits in order. Columns and types as
    ``sweep``'s rows (``meshsim plan --csv``'s columns); the memory shown by the CLI is
    ``peak_memory_gib`` where simulated, else the bound ``est_memory_gib``.
    """
    options = _native.PlannerOptions()
    options.gpus = int(gpus)
    options.budget_gib = float(budget_gib or 0.0)
    options.headroom_gib = float(headroom_gib)
    options.global_batch = int(global_batch)
    options.jax = bool(jax)
    if isinstance(model, (Model, Mapping)):
        model_ref, is_yaml = _yaml_text(model.to_dict() if isinstance(model, Model) else model), True
    else:
        model_ref, is_yaml = os.fspath(model), False
    columns, rows = _native.plan(model_ref, is_yaml, os.fspath(cluster), options, _sets(overrides),
                                 _threads(threads), bool(include_invalid))
    return _rows(columns, rows, as_frame)


def import_hf(config, *, name=None, seq_len=0):
    """A Hugging Face ``config.json`` as a meshsim model, as ``meshsim import hf``.

    ``config``: a path to a config.json, or its content as a dict. ``name``: the model's
    name (default: the config's ``_name_or_path``, else the file's stem, else its
    ``model_type``). ``seq_len``: the training sequence length (0: the config's
    ``max_position_embeddings``). Returns a ``Model``; its ``warnings`` list the
    approximations (also in ``Model.yaml``'s header).
    """
    if isinstance(config, Mapping):
        text, source = json.dumps(config, indent=2, default=_json_default), _DICT
        if not name and not config.get("_name_or_path"):
            name = str(config.get("model_type") or "hf-model")
    else:
        source = os.fspath(config)
        try:
            with open(source, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            message = "cannot read the file (missing, unreadable or a folder)"
            raise InputError(_format(source, 0, 0, "", message), file=source, message=message) from None
    imported = _call(_native.import_hf, text, source, name or "", int(seq_len), pseudo=_DICT, shown=_DICT)
    return Model(imported)

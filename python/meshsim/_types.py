"""The values the API returns: Experiment, Summary, Model."""
import json
import types


class Experiment:
    """A resolved experiment: model, cluster and plan, loaded and checked as ``meshsim
    run`` loads them (``meshsim.load_experiment`` makes one).

    Attributes (read-only): ``name``; ``gpus`` (tp * pp * dp * cp); ``plan``, the plan as
    results.csv's plan columns (``{"plan.tp": 8, ..., "plan.schedule": "1f1b"}``);
    ``model_name``, ``cluster_name``, ``gpu_kind``; ``overrides``, the overrides applied
    to the source, in order (dotted key -> YAML text)."""

    __slots__ = ("_handle", "_source", "_sets")

    def __init__(self, handle, source, sets):
        self._handle = handle  # meshsim._meshsim.Experiment
        self._source = source  # ("file", path) or ("dict", yaml_text, path)
        self._sets = list(sets)  # "dotted.key=VALUE", as --set

    name = property(lambda self: self._handle.name)
    gpus = property(lambda self: self._handle.gpus)
    plan = property(lambda self: self._handle.plan)
    model_name = property(lambda self: self._handle.model_name)
    cluster_name = property(lambda self: self._handle.cluster_name)
    gpu_kind = property(lambda self: self._handle.gpu_kind)

    @property
    def overrides(self):
        return dict(s.split("=", 1) for s in self._sets)

    def with_overrides(self, overrides):
        """This experiment's source loaded again with ``overrides`` applied after its own
        (``meshsim.load_experiment(self, overrides)``)."""
        from . import load_experiment

        return load_experiment(self, overrides)

    def __reduce__(self):  # pickled as its source and overrides (for multiprocessing)
        return (_reload, (self._source, self._sets))

    def __repr__(self):
        p = self.plan
        return (f"<meshsim.Experiment {self.name}: {self.model_name} on {self.gpus} x "
                f"{self.gpu_kind}, tp {p['plan.tp']} pp {p['plan.pp']} dp {p['plan.dp']} "
                f"cp {p['plan.cp']}>")


def _reload(source, sets):
    from . import _load

    return _load(source, sets)


class Group(types.SimpleNamespace):
    """A nested object of the summary (``memory_breakdown_gib``, ``time_breakdown_s``,
    ``sim``): its scalars as attributes."""


class Summary:
    """The summary of one simulated step: summary.json as a Python object.

    Every scalar of summary.json is an attribute of its type (int, float, bool, str),
    under the same name; nested objects are groups of attributes::

        s.step_time_s, s.mfu, s.fits, s.peak_memory_gib, s.gpus, s.name
        s.memory_breakdown_gib.activations, s.time_breakdown_s.bubble, s.sim.events

    The names are listed once in C++ (VisitScalarFields in sim/report/step_summary.h) and
    documented in docs/outputs.md. ``devices``, ``links`` and ``rerouted`` are summary.json's
    lists (dicts as in the JSON; ``rerouted`` is None without what-if link changes).
    ``to_dict()`` is the whole summary.json, key for key; ``scalars()`` the scalars with
    dotted names (``"memory_breakdown_gib.weights"``), as results.csv names them."""

    def __init__(self, scalars, json_text):
        self._json = json_text
        self._parsed = None
        self._scalars = dict(scalars)
        groups = {}
        for name, value in scalars:
            if "." in name:
                group, field = name.split(".", 1)
                groups.setdefault(group, {})[field] = value
            else:
                setattr(self, name, value)
        for group, fields in groups.items():
            setattr(self, group, Group(**fields))

    def to_dict(self):
        """summary.json as nested dicts and lists (a fresh copy each call)."""
        return json.loads(self._json)

    def to_json(self):
        """summary.json's text, as ``meshsim run`` writes it (without the final newline)."""
        return self._json

    def scalars(self):
        """The scalars as {dotted name: value}, in summary.json's order."""
        return dict(self._scalars)

    def _whole(self):
        if self._parsed is None:
            self._parsed = json.loads(self._json)
        return self._parsed

    @property
    def devices(self):
        return self._whole()["devices"]

    @property
    def links(self):
        return self._whole()["links"]

    @property
    def rerouted(self):
        return self._whole().get("rerouted")

    def __repr__(self):
        return (f"<meshsim.Summary {self.name}: step {self.step_time_s:.4g} s, MFU "
                f"{100 * self.mfu:.1f}%, peak {self.peak_memory_gib:.1f} of "
                f"{self.memory_budget_gib:.4g} GiB{'' if self.fits else ' (does not fit)'}>")


class Model:
    """A model imported from a Hugging Face config (``meshsim.import_hf``).

    ``name``; ``to_dict()``, the model mapping of the model YAML schema (usable as an
    experiment's ``model``, e.g. ``{"model": m.to_dict(), ...}``, or passed as is to
    ``meshsim.plan`` and inside experiment dicts); ``yaml``, the model file ``meshsim
    import hf`` writes (header comment and keys); ``save(path)`` writes it; ``warnings``,
    the approximations made; ``model_type``, ``architecture``; ``params_total`` and
    ``params_active`` (per token, less for MoE)."""

    __slots__ = ("_model", "yaml", "warnings", "model_type", "architecture", "params_total",
                 "params_active")

    def __init__(self, imported):
        self._model = imported["model"]
        self.yaml = imported["yaml"]
        self.warnings = list(imported["warnings"])
        self.model_type = imported["model_type"]
        self.architecture = imported["architecture"]
        self.params_total = imported["params_total"]
        self.params_active = imported["params_active"]

    @property
    def name(self):
        return self._model["name"]

    def to_dict(self):
        return json.loads(json.dumps(self._model))

    def save(self, path):
        """Writes the model YAML file (``yaml``) to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.yaml)

    def __repr__(self):
        return f"<meshsim.Model {self.name}: {self.params_total / 1e9:.2f}B parameters>"

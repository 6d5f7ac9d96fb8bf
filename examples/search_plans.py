#!/usr/bin/env python3
"""A search loop over parallelism plans driven through the Python API: random restarts,
then greedy steps to the fastest neighbouring plan that fits, for Llama-2 70B on 64 H100s.

    PYTHONPATH=build/python /usr/bin/python3 examples/search_plans.py [--seed N] [--budget N]

Each candidate is an experiment loaded with overrides (meshsim.load_experiment) and
simulated (meshsim.run); invalid plans raise meshsim.InputError, which the search treats
as infeasible, and plans that do not fit come back with fits False. Evaluations are
cached and run in a thread pool (the GIL is released while meshsim simulates). At the
end the result is checked against the exhaustive sweep of the same space.
"""
import argparse
import concurrent.futures as cf
import os
import random

import meshsim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENT = os.path.join(ROOT, "workloads/experiments/llama2-70b-h100.yaml")
GPUS = 64
SPACE = {  # the bundled sweep's space (dp = GPUS / (tp * pp))
    "plan.tp": [1, 2, 4, 8],
    "plan.pp": [1, 2, 4, 8, 16, 32, 64],
    "plan.zero": [0, 1, 3],
    "plan.micro_batch": [1, 2, 4],
}


def with_dp(plan):
    """The plan with dp derived, or None when tp * pp does not divide the GPUs."""
    tp, pp = plan["plan.tp"], plan["plan.pp"]
    if GPUS % (tp * pp):
        return None
    return {**plan, "plan.dp": GPUS // (tp * pp)}


class Evaluator:
    """Step time of a plan (inf when invalid or over the memory budget), cached."""

    def __init__(self, base, threads):
        self.base = base
        self.cache = {}
        self.pool = cf.ThreadPoolExecutor(threads)

    def _one(self, plan):
        full = with_dp(plan)
        if full is None:
            return float("inf"), "tp*pp does not divide 64"
        try:
            s = meshsim.run(self.base.with_overrides(full))
        except meshsim.InputError as e:
            return float("inf"), f"invalid: {e.key}: {e.message}"
        return (s.step_time_s if s.fits else float("inf")), \
            f"{s.step_time_s:.3f} s, {s.peak_memory_gib:.1f} GiB{'' if s.fits else ' (over)'}"

    def many(self, plans):
        todo = [p for p in plans if key(p) not in self.cache]
        for p, result in zip(todo, self.pool.map(self._one, todo)):
            self.cache[key(p)] = result
        return [self.cache[key(p)][0] for p in plans]


def key(plan):
    return tuple(plan[k] for k in SPACE)


def neighbours(plan):
    """Plans that change one key to the next value up or down."""
    out = []
    for k, values in SPACE.items():
        i = values.index(plan[k])
        for j in (i - 1, i + 1):
            if 0 <= j < len(values):
                out.append({**plan, k: values[j]})
    return out


def search(evaluator, rng, restarts):
    best, best_time = None, float("inf")
    for _ in range(restarts):
        plan = {k: rng.choice(v) for k, v in SPACE.items()}
        time = evaluator.many([plan])[0]
        while True:
            around = neighbours(plan)
            times = evaluator.many(around)
            t, i = min(zip(times, range(len(around))))
            if t >= time:
                break
            plan, time = around[i], t
        if time < best_time:
            best, best_time = plan, time
    return best, best_time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--restarts", type=int, default=6)
    p.add_argument("-j", "--threads", type=int, default=os.cpu_count())
    p.add_argument("--no-check", action="store_true", help="skip the exhaustive sweep")
    args = p.parse_args()

    base = meshsim.load_experiment(EXPERIMENT)
    evaluator = Evaluator(base, args.threads)
    best, best_time = search(evaluator, random.Random(args.seed), args.restarts)
    full = with_dp(best)
    simulated = sum(1 for _, note in evaluator.cache.values() if note.endswith(("GiB", "(over)")))
    print(f"search: {len(evaluator.cache)} plans tried ({simulated} simulated, the rest invalid), best "
          + " ".join(f"{k.split('.')[1]} {v}" for k, v in full.items())
          + f": {evaluator.cache[key(best)][1]}")
    if args.no_check:
        return
    rows = meshsim.sweep(os.path.join(ROOT, "workloads/sweeps/llama2-70b-64-h100.yaml"),
                         threads=args.threads, as_frame=False)
    top = meshsim.rank(rows)[0]
    print(f"sweep: {len(rows)} configurations, fastest that fits: tp {top['plan.tp']} pp "
          f"{top['plan.pp']} dp {top['plan.dp']} zero {top['plan.zero']} micro_batch "
          f"{top['plan.micro_batch']}: {top['step_time_s']:.3f} s")
    gap = best_time / top["step_time_s"] - 1
    swept = sum(1 for r in rows if r["step_time_s"] is not None)
    print(f"the search's plan is {100 * gap:.1f}% slower than the optimum; it simulated "
          f"{simulated} plans, the sweep {swept} (the sweep prunes by the memory bound first)")


if __name__ == "__main__":
    main()

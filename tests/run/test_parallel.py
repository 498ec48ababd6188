"""Data parallel: the same train-step text over 4 (virtual CPU) devices equals the
single-device step within 1e-6; the partitioner turns batch sums into all-reduces.

Runs in a subprocess: XLA_FLAGS must be set before jax is imported."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax
    from verigrad.run import backend, data, manifest, parallel, reference, train
    from verigrad.run.initializers import initial_value

    out = {"devices": len(jax.devices())}
    for opt in ("sgd", "adamw"):
        m = manifest.load(reference.write(sys.argv[1] + "/" + opt, batch=32, hidden=16, opt=opt))
        ts = m.train_step
        text = m.text(ts)
        sharded = [p.role in ("batch_x", "batch_y", "drop_mask") for p in ts.inputs]
        single = backend.compile(text)
        multi = parallel.compile_data_parallel(text, sharded)
        rng = np.random.default_rng(0)
        split = data.digits()
        x, y, _ = next(data.batches(split.x_train, split.y_train, 32, rng, smoothing=0.1))
        feed = {"batch_x": x, "batch_y": y, "lr": np.float32(0.05), "bias_correction1": np.float32(0.1),
                "bias_correction2": np.float32(0.001)}
        args = []
        for p in ts.inputs:
            if p.role == "param":
                args.append(initial_value(next(q.init for q in m.params if q.name == p.name), p.shape, rng))
            elif p.role == "opt_state":
                args.append(np.zeros(p.shape, np.float32))
            elif p.role == "drop_mask":
                args.append(((rng.random(p.shape) < p.keep) / p.keep).astype(np.float32))
            else:
                args.append(feed[p.role])
        errors = []
        a, b = list(args), list(args)
        for step in range(2):
            ra = [backend.to_host(o) for o in single(*a)]
            ob = multi(*b)
            rb = [backend.to_host(o) for o in ob]
            errors.append(max(float(np.max(np.abs(u - v)) / max(1.0, float(np.max(np.abs(u))))) for u, v in zip(ra, rb)))
            for k, p in enumerate(ts.inputs):          # feed the new state back (device arrays for multi)
                if p.role in ("param", "opt_state"):
                    j = [i for i, q in enumerate(ts.outputs) if q.name == p.name][0]
                    a[k], b[k] = ra[j], ob[j]
        hlo = multi.exe.hlo_modules()[0].to_string()
        out[opt] = {"errors": errors, "all_reduce": "all-reduce" in hlo,
                    "x_shard": list(multi._put(x, [p.role for p in ts.inputs].index("batch_x")).addressable_shards[0].data.shape),
                    "replicated": all(o.sharding.is_fully_replicated for o in ob)}
    print(json.dumps(out))
""")


def test_four_devices_equal_one_within_1e_6():
    """One subprocess (a few seconds of compiles) checks both optimizers over two steps."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-c", SCRIPT, tmp], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["devices"] == 4
    for opt in ("sgd", "adamw"):
        r = result[opt]
        assert len(r["errors"]) == 2 and max(r["errors"]) <= 1e-6, (opt, r["errors"])
        assert r["x_shard"] == [8, 64]            # each device holds a quarter of the batch
        assert r["all_reduce"]                     # the gradient sums cross devices
        assert r["replicated"]                     # new parameters are the same on every device


def test_annotation_refuses_an_unsplittable_batch():
    from verigrad.run import parallel
    text = "func.func public @main(%x: tensor<6x2xf32>) -> tensor<6x2xf32> {\n  return %x : tensor<6x2xf32>\n}"
    with pytest.raises(ValueError, match=r"argument 0 \(tensor<6x2xf32>\): its first axis does not split over 4"):
        parallel.annotate(text, [True], 4)
    annotated = parallel.annotate(text, [True], 2)
    assert 'sdy.mesh @mesh = <["batch"=2]>' in annotated and '[{"batch"}, {}]' in annotated
    assert "mhlo.num_partitions = 2" in annotated

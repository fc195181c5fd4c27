#!/usr/bin/env python3
"""Reference values for spmdsim's models layer (tests/mlp_test.cpp), computed by real JAX and optax.

For the tutorials' MLP (a list of {'w', 'b'} dicts, tanh or relu hidden layers, no activation on the last)
it records, in float32 on the CPU backend:
  grad_<activation>_<loss>   jax.value_and_grad of the loss at given params and batch: loss and grads;
  train_<optimizer>          three steps of optax.sgd / optax.sgd(momentum=0.9) / optax.adam on one batch:
                             the loss before each step and the params after the last.

Usage, from the repository root (a few seconds):
    pip install -r tests/reference/requirements.txt optax==0.2.4 chex==0.1.88
    python3 tests/reference/make_model_fixtures.py
(optax 0.2.4 and chex 0.1.88 are the newest that keep jax at 0.5.2; a bare `pip install optax` upgrades jax.)
Re-running gives byte-identical files: fixed seeds, sorted keys, float32 values written as the repr of
their exact double.

Format of fixtures_models/<case>.json:
  {"case", "jax_version", "optax_version", "layer_sizes", "activation", "loss", "labels" ("onehot" | "int" |
   null for mse), "params", "x", "y", and either "loss_value" + "grads" or "optimizer" + "learning_rate" +
   "steps" + "losses" + "final_params"}
  params / grads / final_params: a list of {"b": array, "w": array}; array: {"dtype", "shape", "data"}
  (data flat, row-major).
"""
import json
import os
import sys
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures_models")
LAYERS = [8, 16, 12, 4]
BATCH = 6


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def array_json(a):
    a = np.asarray(a)
    dtype = {np.dtype(np.float32): "float32", np.dtype(np.int32): "int32"}[a.dtype]
    data = [float(v) if dtype == "float32" else int(v) for v in a.reshape(-1).tolist()]
    return {"dtype": dtype, "shape": list(a.shape), "data": data}


def params_json(params):
    return [{"b": array_json(layer["b"]), "w": array_json(layer["w"])} for layer in params]


def make_params(r):
    params = []
    for n_in, n_out in zip(LAYERS[:-1], LAYERS[1:]):
        params.append({"w": (r.standard_normal((n_in, n_out)) * 0.3).astype(np.float32),
                       "b": (r.standard_normal((n_out,)) * 0.1).astype(np.float32)})
    return params


def forward(params, x, activation):
    act = jnp.tanh if activation == "tanh" else jax.nn.relu
    for layer in params[:-1]:
        x = act(jnp.dot(x, layer["w"]) + layer["b"])
    return jnp.dot(x, params[-1]["w"]) + params[-1]["b"]


def loss_fn(params, x, y, activation, loss, labels):
    logits = forward(params, x, activation)
    if loss == "mse":
        return jnp.mean((logits - y) ** 2)
    if labels == "int":
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return optax.softmax_cross_entropy(logits, y).mean()


def make_batch(r, loss, labels):
    x = r.standard_normal((BATCH, LAYERS[0])).astype(np.float32)
    if loss == "mse":
        y = r.standard_normal((BATCH, LAYERS[-1])).astype(np.float32)
    else:
        ints = r.integers(0, LAYERS[-1], size=BATCH).astype(np.int32)
        y = ints if labels == "int" else np.eye(LAYERS[-1], dtype=np.float32)[ints]
    return x, y


def grad_case(activation, loss, labels):
    name = f"grad_{activation}_{loss}" + (f"_{labels}" if labels else "")
    r = rng(name)
    params = make_params(r)
    x, y = make_batch(r, loss, labels)
    value, grads = jax.value_and_grad(loss_fn)(params, x, y, activation, loss, labels)
    return name, {"activation": activation, "loss": loss, "labels": labels, "params": params_json(params),
                  "x": array_json(x), "y": array_json(y), "loss_value": float(np.float32(value)),
                  "grads": params_json(grads)}


def train_case(optimizer_name):
    name = f"train_{optimizer_name}"
    r = rng(name)
    params = make_params(r)
    x, y = make_batch(r, "softmax_cross_entropy", "onehot")
    learning_rate = {"sgd": 0.1, "momentum": 0.1, "adam": 0.01}[optimizer_name]
    optimizer = {"sgd": lambda: optax.sgd(learning_rate),
                 "momentum": lambda: optax.sgd(learning_rate, momentum=0.9),
                 "adam": lambda: optax.adam(learning_rate)}[optimizer_name]()
    initial = params
    state = optimizer.init(params)
    losses = []
    for _ in range(3):
        value, grads = jax.value_and_grad(loss_fn)(params, x, y, "tanh", "softmax_cross_entropy", "onehot")
        updates, state = optimizer.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        losses.append(float(np.float32(value)))
    return name, {"activation": "tanh", "loss": "softmax_cross_entropy", "labels": "onehot",
                  "params": params_json(initial), "x": array_json(x), "y": array_json(y),
                  "optimizer": optimizer_name, "learning_rate": learning_rate, "steps": 3, "losses": losses,
                  "final_params": params_json(params)}


def main():
    cases = []
    for activation in ("tanh", "relu"):
        cases.append(grad_case(activation, "mse", None))
        cases.append(grad_case(activation, "softmax_cross_entropy", "onehot"))
        cases.append(grad_case(activation, "softmax_cross_entropy", "int"))
    for optimizer_name in ("sgd", "momentum", "adam"):
        cases.append(train_case(optimizer_name))
    os.makedirs(OUT, exist_ok=True)
    for name, body in cases:
        body.update({"case": name, "jax_version": jax.__version__, "optax_version": optax.__version__,
                     "layer_sizes": LAYERS})
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(body, f, sort_keys=True, indent=1)
            f.write("\n")
    print(f"wrote {len(cases)} fixtures to {os.path.relpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()

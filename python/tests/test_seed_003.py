# The Flax NNX data-parallelism tutorial (../shared/seeds/003_*.txt, "Data Parallelism with pmap"): its CNN
# (two convolutions, max pooling, a dense layer), its replicated optimizer state and sharded batches, and its
# pmapped training steps as the page writes them, run by spmdsim and by JAX on all 8 devices: the same values,
# shapes and dtypes, step after step.
#
# Three departures, each because the page's code does not run as written, in JAX or in spmdsim:
# - The page passes the nnx.Optimizer itself to the pmapped step. NNX objects are not pytrees in flax 0.10 (the
#   version whose nnx.Optimizer has the page's `update(grads)` and `.model`), so JAX refuses the call, and
#   spmdsim refuses it too, with the error JAX's tracer gives (test_optimizer_object_refused_as_jax_refuses_it).
#   The steps run here are the page's functions unchanged (their `__wrapped__`), pmapped over the optimizer's
#   arrays with the object merged back from them around the step: NNX's own split/merge, as the page does
#   around replication.
# - nnx.Optimizer counts its steps in a uint32, which spmdsim's arrays lack (sim/'s DType has no unsigned
#   integer): spmdsim refuses the step, naming the increment (test_uint32_step_counter_refused), and the steps
#   run here with the counter held as an int32, by spmdsim and by JAX alike.
# - The gradient-accumulation step reads `state.model.apply`, `state.params` and `state.apply_gradients`,
#   Linen's API: it runs here on a Linen version of the CNN in a TrainState that also holds the model.
# Random numbers (the batches, the initial parameters) are drawn outside pmap, as the page draws them.
from functools import partial
from typing import Any, Dict

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from conftest import assert_same
from flax import nnx, struct
from flax.training import train_state

import spmdsim

sim = spmdsim.Simulation(preset="a100", devices=8)

# Step 1: Check Available Devices
num_devices = jax.local_device_count()


# Step 2: Define Your Model
class CNNModel(nnx.Module):
    """Example CNN for data parallel training."""

    def __init__(self, num_classes: int = 10, rngs: nnx.Rngs = None):
        self.conv1 = nnx.Conv(3, 32, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(32, 64, kernel_size=(3, 3), rngs=rngs)
        self.dense = nnx.Linear(64 * 8 * 8, num_classes, rngs=rngs)

    def __call__(self, x, train: bool = False):
        x = self.conv1(x)
        x = nnx.relu(x)
        x = nnx.max_pool(x, window_shape=(2, 2), strides=(2, 2))

        x = self.conv2(x)
        x = nnx.relu(x)
        x = nnx.max_pool(x, window_shape=(2, 2), strides=(2, 2))

        x = x.reshape(x.shape[0], -1)
        x = self.dense(x)
        return x


def replicated_optimizer():
    """Step 3: Replicate Model Across Devices, as the page does it; also returns the graphdef and arrays."""
    rngs = nnx.Rngs(0)
    model = CNNModel(num_classes=10, rngs=rngs)
    optimizer = optax.adam(learning_rate=1e-3)
    state = nnx.Optimizer(model, optimizer)
    graphdef, state_arrays = nnx.split(state)
    replicated_state = jax.tree.map(
        lambda x: jnp.broadcast_to(x, (num_devices,) + x.shape),
        state_arrays
    )
    state = nnx.merge(graphdef, replicated_state)
    return state, graphdef, replicated_state


# Step 4: Create Parallel Training Step
@partial(jax.pmap, axis_name='devices')
def train_step(state: nnx.Optimizer, batch: Dict):
    def loss_fn(model):
        logits = model(batch['image'], train=True)
        labels_onehot = jax.nn.one_hot(batch['label'], num_classes=10)
        loss = optax.softmax_cross_entropy(logits, labels_onehot).mean()

        predictions = jnp.argmax(logits, axis=-1)
        accuracy = jnp.mean(predictions == batch['label'])

        return loss, {'accuracy': accuracy}

    grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)
    (loss, metrics), grads = grad_fn(state.model)

    grads = jax.lax.pmean(grads, axis_name='devices')
    loss = jax.lax.pmean(loss, axis_name='devices')
    metrics = jax.tree.map(lambda x: jax.lax.pmean(x, axis_name='devices'), metrics)

    state.update(grads)

    return state, loss, metrics


# Step 5: Prepare Data for pmap
def shard_batch(batch: Dict, num_devices: int) -> Dict:
    def reshape_for_devices(x):
        batch_size = x.shape[0]
        assert batch_size % num_devices == 0, \
            f"Batch size {batch_size} must be divisible by num_devices"

        per_device_batch = batch_size // num_devices
        return x.reshape((num_devices, per_device_batch) + x.shape[1:])

    return jax.tree.map(reshape_for_devices, batch)


# Advanced Techniques 2: Mixed Precision Training
@partial(jax.pmap, axis_name='devices')
def train_step_mixed_precision(state, batch):
    def loss_fn(model):
        x = batch['image'].astype(jnp.bfloat16)
        logits = model(x, train=True)
        logits = logits.astype(jnp.float32)
        labels_onehot = jax.nn.one_hot(batch['label'], num_classes=10)

        loss = optax.softmax_cross_entropy(logits, labels_onehot).mean()
        return loss

    grad_fn = nnx.value_and_grad(loss_fn)
    loss, grads = grad_fn(state.model)

    grads = jax.lax.pmean(grads, axis_name='devices')

    state.update(grads)
    return state, loss


# Advanced Techniques 3: Dynamic Batch Sizes
@partial(jax.pmap, axis_name='devices')
def train_step_dynamic(state, batch, mask):
    def loss_fn(model):
        logits = model(batch['image'], train=True)
        labels_onehot = jax.nn.one_hot(batch['label'], num_classes=10)

        loss = optax.softmax_cross_entropy(logits, labels_onehot)
        loss = (loss * mask).sum() / mask.sum()

        return loss

    grad_fn = nnx.value_and_grad(loss_fn)
    loss, grads = grad_fn(state.model)

    grads = jax.lax.pmean(grads, axis_name='devices')
    loss = jax.lax.pmean(loss, axis_name='devices')

    state.update(grads)
    return state, loss


def on_arrays(step, graphdef):
    """The page's pmapped `step`, pmapped instead over the optimizer's arrays (nnx.split's state): the step
    runs on the object nnx.merge makes of them and gives back its arrays."""
    @partial(jax.pmap, axis_name='devices')
    def step_on_arrays(state_arrays, *args):
        state, *results = step.__wrapped__(nnx.merge(graphdef, state_arrays), *args)
        return (nnx.state(state), *results)

    return step_on_arrays


def batch_of(seed, batch_size=128):
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch_size, 32, 32, 3), np.float32)
    labels = rng.integers(0, 10, batch_size).astype(np.int32)
    return {'image': images, 'label': labels}


def train_both(step, state_arrays, args_of_step, rtol=1e-5):
    """Runs `step` by spmdsim and by JAX, each on its own state, one step per element of args_of_step."""
    sim_state = jax_state = state_arrays
    for args in args_of_step:
        sim_state, *sim_results = sim.run(step, sim_state, *args)
        jax_state, *jax_results = step(jax_state, *args)
        assert_same(sim_results, jax_results, rtol=rtol, atol=1e-6)
        # Adam divides each gradient by its root mean square plus eps (1e-8): where a gradient is of the order
        # of eps, the rounding of JAX's float32 convolutions (spmdsim sums in double) moves its update by a few
        # percent of the learning rate (1e-3). The gradients themselves agree to rounding (test_gradients).
        assert_same(sim_state, jax_state, rtol=1e-4, atol=5e-5)
    return sim_results


def test_optimizer_object_refused_as_jax_refuses_it():
    state, _, _ = replicated_optimizer()
    batch_sharded = shard_batch(batch_of(0), num_devices)
    with pytest.raises(ValueError, match="its rank should be at least 1, but is only 0"):
        train_step(state, batch_sharded)
    with pytest.raises(TypeError, match="type <class 'flax.nnx.training.optimizer.Optimizer'> and was passed to "
                                        "the function at path state"):
        sim.run(train_step, state, batch_sharded)


def with_int32_step_counter(state_arrays):
    return jax.tree.map(lambda x: x.astype(jnp.int32) if x.dtype == jnp.uint32 else x, state_arrays)


def test_uint32_step_counter_refused():
    _, graphdef, replicated_state = replicated_optimizer()
    with pytest.raises(spmdsim.UnsupportedPrimitiveError,
                       match="'add' on uint32 values at .*optimizer.py.*spmdsim's arrays have no uint32 dtype"):
        sim.run(on_arrays(train_step, graphdef), replicated_state, shard_batch(batch_of(0), num_devices))


def test_training_loop():
    _, graphdef, replicated_state = replicated_optimizer()
    replicated_state = with_int32_step_counter(replicated_state)
    batches = [shard_batch(batch_of(seed), num_devices) for seed in range(2)]
    loss, metrics = train_both(on_arrays(train_step, graphdef), replicated_state, [(b,) for b in batches])
    assert loss.shape == (num_devices,) and metrics['accuracy'].shape == (num_devices,)


def test_gradients():
    """The page's loss_fn and nnx.value_and_grad, the gradients pmean'd as its step pmeans them."""
    _, graphdef, replicated_state = replicated_optimizer()
    replicated_state = with_int32_step_counter(replicated_state)

    @partial(jax.pmap, axis_name='devices')
    def averaged_gradients(state_arrays, batch):
        def loss_fn(model):
            logits = model(batch['image'], train=True)
            labels_onehot = jax.nn.one_hot(batch['label'], num_classes=10)
            return optax.softmax_cross_entropy(logits, labels_onehot).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(nnx.merge(graphdef, state_arrays).model)
        return jax.lax.pmean(loss, axis_name='devices'), jax.lax.pmean(grads, axis_name='devices')

    batch_sharded = shard_batch(batch_of(1), num_devices)
    assert_same(sim.run(averaged_gradients, replicated_state, batch_sharded),
                averaged_gradients(replicated_state, batch_sharded), rtol=1e-5, atol=1e-6)


def test_mixed_precision():
    _, graphdef, replicated_state = replicated_optimizer()
    replicated_state = with_int32_step_counter(replicated_state)
    batch_sharded = shard_batch(batch_of(2), num_devices)
    train_both(on_arrays(train_step_mixed_precision, graphdef), replicated_state, [(batch_sharded,)], rtol=1e-3)


def test_dynamic_batch_sizes():
    _, graphdef, replicated_state = replicated_optimizer()
    replicated_state = with_int32_step_counter(replicated_state)
    batch_sharded = shard_batch(batch_of(3), num_devices)
    mask = shard_batch((np.arange(128) < 100).astype(np.float32), num_devices)  # the last 28 are padding
    train_both(on_arrays(train_step_dynamic, graphdef), replicated_state, [(batch_sharded, mask)])


# Advanced Techniques 1: Gradient Accumulation, on the Linen CNN its `state.model.apply` calls for.
class LinenCNN(nn.Module):
    num_classes: int = 10

    @nn.compact
    def __call__(self, x):
        x = nn.max_pool(nn.relu(nn.Conv(32, kernel_size=(3, 3))(x)), window_shape=(2, 2), strides=(2, 2))
        x = nn.max_pool(nn.relu(nn.Conv(64, kernel_size=(3, 3))(x)), window_shape=(2, 2), strides=(2, 2))
        return nn.Dense(self.num_classes)(x.reshape(x.shape[0], -1))


class TrainStateWithModel(train_state.TrainState):
    model: Any = struct.field(pytree_node=False)


@partial(jax.pmap, axis_name='devices')
def train_step_with_accumulation(state, batches):
    """Accumulate gradients over multiple microbatches."""

    def compute_grads(params, batch):
        def loss_fn(params):
            logits = state.model.apply({'params': params}, batch['image'])
            return optax.softmax_cross_entropy_with_integer_labels(
                logits, batch['label']
            ).mean()
        return jax.grad(loss_fn)(params)

    accumulated_grads = None

    for batch in batches:
        grads = compute_grads(state.params, batch)

        if accumulated_grads is None:
            accumulated_grads = grads
        else:
            accumulated_grads = jax.tree.map(
                lambda a, g: a + g,
                accumulated_grads, grads
            )

    accumulated_grads = jax.tree.map(
        lambda g: g / len(batches),
        accumulated_grads
    )

    accumulated_grads = jax.lax.pmean(accumulated_grads, axis_name='devices')

    state = state.apply_gradients(grads=accumulated_grads)
    return state


def test_gradient_accumulation():
    model = LinenCNN()
    params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, 32, 32, 3)))['params']
    state = TrainStateWithModel.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-3), model=model)
    state = jax.tree.map(lambda x: jnp.broadcast_to(x, (num_devices,) + jnp.shape(x)), state)  # step is an int
    microbatches = [shard_batch(batch_of(seed, batch_size=64), num_devices) for seed in (4, 5)]
    assert_same(sim.run(train_step_with_accumulation, state, microbatches),
                train_step_with_accumulation(state, microbatches), rtol=1e-4, atol=1e-6)


def test_cnn_step_abstract():
    _, graphdef, replicated_state = replicated_optimizer()
    replicated_state = with_int32_step_counter(replicated_state)
    step = on_arrays(train_step, graphdef)
    batch_sharded = shard_batch(batch_of(0), num_devices)
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), (replicated_state, batch_sharded))
    abstract = sim.run(step, *shapes)
    expected = jax.eval_shape(step, replicated_state, batch_sharded)
    assert jax.tree.structure(abstract) == jax.tree.structure(expected)
    for got, want in zip(jax.tree.leaves(abstract), jax.tree.leaves(expected)):
        assert (got.shape, got.dtype) == (want.shape, want.dtype)


def test_pitfall_batch_without_device_dimension():
    # Common Pitfalls 3: the batch passed without shard_batch ("Error!"): JAX's error, from spmdsim too.
    _, graphdef, replicated_state = replicated_optimizer()
    replicated_state = with_int32_step_counter(replicated_state)
    step = on_arrays(train_step, graphdef)
    batch = batch_of(0)  # Shape: (128, 32, 32, 3)
    with pytest.raises(ValueError) as jax_error:
        step(replicated_state, batch)
    with pytest.raises(ValueError) as sim_error:
        sim.run(step, replicated_state, batch)
    assert str(sim_error.value) == str(jax_error.value)

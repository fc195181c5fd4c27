# The pmap patterns tutorial (../shared/seeds/002_*.txt) as it writes them, on 8 devices, by spmdsim and by JAX:
# the same values, shapes and dtypes (psum of a Python int, jnp.std, replicated parameters with in_axes 0).
import jax
import jax.numpy as jnp
from jax import lax, pmap
from conftest import assert_same

import spmdsim

n_devices = 8
sim = spmdsim.Simulation(preset="a100", devices=n_devices)


def both(fn, *args, rtol=1e-6):
    assert_same(sim.run(fn, *args), fn(*args), rtol=rtol, atol=1e-5)


def replicate_across_devices(x):
    return jnp.broadcast_to(x, (n_devices,) + x.shape)


def shard_across_devices(x, axis=0):
    return x.reshape(n_devices, -1, *x.shape[axis + 1:])


def test_replicated_params_sharded_data():
    single_param = jax.random.normal(jax.random.PRNGKey(10), (64, 32))
    replicated_params = replicate_across_devices(single_param)
    large_data = jax.random.normal(jax.random.PRNGKey(11), (n_devices * 8, 64))
    sharded_data = shard_across_devices(large_data)

    def compute_with_params(params, data):
        return jnp.sum(data @ params, axis=1)

    pmapped_compute = pmap(compute_with_params, in_axes=(0, 0))
    both(pmapped_compute, replicated_params, sharded_data, rtol=1e-5)


def test_reduction_operations():
    def parallel_sum_and_mean(x):
        local_sum = jnp.sum(x)
        local_count = x.size
        global_sum = lax.psum(local_sum, axis_name='devices')
        global_count = lax.psum(local_count, axis_name='devices')
        global_mean = global_sum / global_count
        return {'local_sum': local_sum, 'global_sum': global_sum, 'global_mean': global_mean}

    pmapped_reduction = pmap(parallel_sum_and_mean, axis_name='devices')
    test_data = jax.random.normal(jax.random.PRNGKey(20), (n_devices, 1000))
    both(pmapped_reduction, test_data, rtol=1e-5)


def test_efficient_data_pattern():
    def efficient_data_pattern(large_array):
        local_mean = jnp.mean(large_array, axis=0)
        local_std = jnp.std(large_array, axis=0)
        global_mean = lax.pmean(local_mean, axis_name='devices')
        return {'local_mean': local_mean, 'global_mean': global_mean, 'local_std': local_std}

    pmapped_efficient = pmap(efficient_data_pattern, axis_name='devices')
    large_test_data = jax.random.normal(jax.random.PRNGKey(50), (n_devices, 1000, 64))
    both(pmapped_efficient, large_test_data, rtol=1e-5)

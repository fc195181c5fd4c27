# The hands-on pmap tutorial (../shared/seeds/004_*.txt, "pmap ... in practice"), its three pmap examples as the
# page writes them (the prints included), on all 8 devices, by spmdsim and by JAX: the same values, shapes and
# dtypes.
import jax
import jax.numpy as jnp
from conftest import assert_same

import spmdsim

num_devices = jax.device_count()
data_size_per_device = 4
total_data_size = num_devices * data_size_per_device
global_data = jnp.arange(total_data_size)
sharded_data = global_data.reshape((num_devices, data_size_per_device))

sim = spmdsim.Simulation(preset="a100", devices=num_devices)


def both(fn, *args):
    assert_same(sim.run(fn, *args), fn(*args))


def test_scale_by_two():
    def scale_by_two(x):
        print("Compiling and running scale_by_two...")  # To see when JAX traces/runs
        return x * 2

    parallel_scale = jax.pmap(scale_by_two)
    both(parallel_scale, sharded_data)


def test_scale_and_add_in_axes_0_none():
    def scale_and_add(x, y):
        print(f"Compiling and running scale_and_add on device {jax.process_index()}...")
        return x * 2 + y

    scalar_y = jnp.float32(100.0)
    parallel_scale_add = jax.pmap(scale_and_add, in_axes=(0, None))
    both(parallel_scale_add, sharded_data, scalar_y)


def test_scale_and_sum_psum():
    def scale_and_sum(x):
        print(f"Compiling and running scale_and_sum on device {jax.process_index()}...")
        scaled_x = x * 2
        local_sum = jnp.sum(scaled_x)
        global_sum = jax.lax.psum(local_sum, axis_name='devices')
        return scaled_x, global_sum

    parallel_scale_sum = jax.pmap(scale_and_sum, axis_name='devices')
    sharded_data = jnp.arange(num_devices * data_size_per_device).reshape((num_devices, data_size_per_device))
    result_scaled, result_sum = sim.run(parallel_scale_sum, sharded_data)
    assert_same((result_scaled, result_sum), parallel_scale_sum(sharded_data))
    expected_sum = jnp.sum(jnp.arange(total_data_size) * 2)
    assert (result_sum == int(expected_sum)).all()

# The pmap tutorial's examples (../shared/seeds/000_*.txt, "Single-Host Sharding with jax.pmap"), written as
# the notebook writes them, run by spmdsim and by JAX on as many CPU devices: the same values, shapes, dtypes.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same

import spmdsim

num_devices = 4  # the notebook forces 4 CPU devices
devices = jax.local_devices()[:num_devices]
feature_size = 3
per_device_batch_size = 8
rng = np.random.default_rng(0)
global_aurora_data = rng.random((per_device_batch_size * num_devices, feature_size)).astype(np.float32)
current_prepared_data = global_aurora_data.reshape(num_devices, per_device_batch_size, feature_size)
aurora_scalar_param = jnp.array(5.0, dtype=jnp.float32)


@pytest.fixture(scope="module")
def sim():
    return spmdsim.Simulation(preset="a100", devices=8)


def both(sim, fn, *args):
    assert_same(sim.run(fn, *args), fn(*args))


def scale(x_shard, scale_factor_on_device):
    return (x_shard) * scale_factor_on_device


def process_data_shard_example(data_shard, replicated_scalar_param):
    return jnp.sum(data_shard * replicated_scalar_param, axis=0)


def test_scale_in_axes_0_0(sim):
    example_elements_per_device = 4
    sharded_x_data = jnp.arange(num_devices * example_elements_per_device, dtype=jnp.float32).reshape(
        num_devices, example_elements_per_device)
    sharded_scale_factors_data = jnp.array([10.0 * (i + 1) for i in range(num_devices)], dtype=jnp.float32)
    pmapped_scaled_square_fn = jax.pmap(scale, in_axes=(0, 0), axis_name='i')
    both(sim, pmapped_scaled_square_fn, sharded_x_data, sharded_scale_factors_data)


def test_in_axes_0_none(sim):
    pmapped_process_fn = jax.pmap(process_data_shard_example, in_axes=(0, None), axis_name='data_axis')
    both(sim, pmapped_process_fn, current_prepared_data, aurora_scalar_param)


def test_out_axes(sim):
    def process_to_scalar_sum_example(data_shard, replicated_param):
        return jnp.sum(data_shard * replicated_param)

    pmapped_scalar_output_fn = jax.pmap(process_to_scalar_sum_example, in_axes=(0, None))
    both(sim, pmapped_scalar_output_fn, current_prepared_data, aurora_scalar_param)

    def process_and_return_fixed_value(data_shard_ignored, param_ignored):
        return jnp.array(42.0)

    dummy_sharded_input_for_out_axes_none = jnp.zeros((num_devices, 1))
    pmapped_identical_output_fn = jax.pmap(process_and_return_fixed_value, in_axes=(0, None), out_axes=None)
    both(sim, pmapped_identical_output_fn, dummy_sharded_input_for_out_axes_none, None)


def test_static_broadcasted_argnums(sim):
    def my_static_op_example(x_dynamic_shard, static_python_val: int, another_dynamic_val_replicated):
        if static_python_val > 5:
            return x_dynamic_shard * 100 + another_dynamic_val_replicated
        else:
            return x_dynamic_shard * static_python_val + another_dynamic_val_replicated

    pmapped_static_op_fn = jax.pmap(my_static_op_example, static_broadcasted_argnums=(1,), in_axes=(0, None, None))
    dynamic_input_shards = current_prepared_data[:, :, 0]
    another_dynamic_param_replicated = jnp.array(0.5, dtype=jnp.float32)
    both(sim, pmapped_static_op_fn, dynamic_input_shards, 7, another_dynamic_param_replicated)
    both(sim, pmapped_static_op_fn, dynamic_input_shards, 3, another_dynamic_param_replicated)


def test_devices_subset(sim):
    num_subset_devices = max(1, num_devices // 2)
    subset_target_devices = devices[:num_subset_devices]
    total_batch_size_for_subset = num_subset_devices * per_device_batch_size
    subset_global_data_slice = global_aurora_data[:total_batch_size_for_subset, :]
    subset_prepared_data = subset_global_data_slice.reshape(num_subset_devices, per_device_batch_size, feature_size)
    pmapped_on_subset_fn = jax.pmap(process_data_shard_example, in_axes=(0, None), devices=subset_target_devices,
                                    axis_name='data_axis_subset')
    both(sim, pmapped_on_subset_fn, subset_prepared_data, aurora_scalar_param)


def test_collectives(sim):
    PMAP_COLLECTIVES_AXIS_NAME = 'aurora_data_parallel_mesh'

    def process_with_collectives_example(data_shard_input, model_weights_replicated):
        local_output = jnp.dot(data_shard_input, model_weights_replicated)
        global_sum_output = jax.lax.psum(local_output, axis_name=PMAP_COLLECTIVES_AXIS_NAME)
        mean_of_specific_value = jax.lax.pmean(local_output[0, 0], axis_name=PMAP_COLLECTIVES_AXIS_NAME)
        gathered_first_rows_from_all_devices = jax.lax.all_gather(local_output[0, :],
                                                                  axis_name=PMAP_COLLECTIVES_AXIS_NAME)
        return global_sum_output, mean_of_specific_value, gathered_first_rows_from_all_devices

    in_features = current_prepared_data.shape[2]
    out_feature_size_example = 2
    aurora_model_weights = jnp.array(rng.random((in_features, out_feature_size_example)).astype(np.float32))
    pmapped_collective_op_fn = jax.pmap(process_with_collectives_example, in_axes=(0, None),
                                        axis_name=PMAP_COLLECTIVES_AXIS_NAME)
    both(sim, pmapped_collective_op_fn, current_prepared_data, aurora_model_weights)


def test_report_after_the_examples(sim):
    report = sim.report()
    assert report["calls"], "every sim.run is a call of the report"
    assert "dev0" in sim.report_table()

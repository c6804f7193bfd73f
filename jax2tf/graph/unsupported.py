"""The JAX primitives that have no graph-serialization rule, and why.

With the rule registry this accounts for every primitive JAX defines:
tests/graph/test_accounting.py enumerates JAX's primitives (across the modules
that define them, Pallas and sparse included) and fails on any that is neither
ruled nor listed here, and on any listed here that has gained a rule. A new JAX
release that adds a primitive therefore fails that test until the primitive
gets a rule or a place here. Names from every supported JAX version are listed;
a name a version lacks is harmless.

The reason appears in the error a user gets when conversion meets one of them.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Family:
  title: str
  why: str
  primitives: frozenset


FAMILIES = {
  # Where a new JAX primitive waits for its rule; empty while every primitive
  # has a rule or one of the reasons below.
  "not_yet": Family(
    "without a graph rule",
    ("graph serialization has no rule for this primitive; native serialization converts it"),
    frozenset(),
  ),
  "schur": Family(
    "Schur decomposition",
    (
      "JAX computes the Schur form only with LAPACK's gees, on CPU. The form is unique "
      "only up to the order of the eigenvalues on its diagonal and a unitary factor per "
      "eigenvalue, which gees fixes through the convergence of its shifted QR iteration; "
      "TensorFlow has no Schur decomposition op, and an iteration written in TF ops would "
      "give another valid Schur form, not JAX's values. jnp.linalg.eigvals gives the "
      "eigenvalues alone"
    ),
    frozenset({"schur"}),
  ),
  "sparse": Family(
    "sparse arrays",
    (
      "a jax.experimental.sparse primitive (BCOO/BCSR/COO/CSR); graph serialization has "
      "no rule for sparse arrays: densify them (.todense()) before the converted function"
    ),
    frozenset(
      {
        "bcoo_dot_general",
        "bcoo_dot_general_sampled",
        "bcoo_extract",
        "bcoo_fromdense",
        "bcoo_sort_indices",
        "bcoo_spdot_general",
        "bcoo_sum_duplicates",
        "bcoo_todense",
        "bcoo_transpose",
        "bcsr_dot_general",
        "bcsr_extract",
        "bcsr_fromdense",
        "bcsr_todense",
        "coo_fromdense",
        "coo_matmat",
        "coo_matvec",
        "coo_spmm",
        "coo_spmv",
        "coo_todense",
        "csr_fromdense",
        "csr_matmat",
        "csr_matvec",
        "csr_spmm",
        "csr_spmv",
        "csr_todense",
        "spsolve",
        "todense",
      }
    ),
  ),
  "state": Family(
    "mutable state",
    (
      "mutable array references and boxes (jax.new_ref, Pallas refs, hijax): graph "
      "serialization has no TF representation for them; keep the state outside the "
      "converted function"
    ),
    frozenset(
      {
        "accum_grad_in_ref",
        "addupdate",
        "box_get",
        "box_set",
        "broadcast_to",
        "empty_ref",
        "free_ref",
        "freeze",
        "get",
        "log_extend",
        "log_read",
        "new_box",
        "new_log",
        "new_ref",
        "pin",
        "run_state",
        "swap",
        "unpin",
        "with_memory_space_constraint",
      }
    ),
  ),
  "collective": Family(
    "collectives and named mesh axes",
    (
      "a collective or a cast over named mesh axes (shard_map, pmap, multi-host "
      "utilities): graph serialization lowers one device's program and TF has no named-"
      "axis collectives"
    ),
    frozenset(
      {
        "all_gather",
        "all_gather_done",
        "all_gather_invariant",
        "all_gather_reduced",
        "all_gather_reduced_start",
        "all_gather_start",
        "all_to_all",
        "all_to_all_done",
        "all_to_all_start",
        "axis_index",
        "global_array_to_host_local_array",
        "host_local_array_to_global_array",
        "pbroadcast",
        "pbroadcast_done",
        "pbroadcast_dynamic",
        "pbroadcast_start",
        "pmax",
        "pmin",
        "ppermute",
        "ppermute_done",
        "ppermute_start",
        "precv",
        "preduced",
        "psend",
        "psum",
        "psum_done",
        "psum_invariant",
        "psum_invariant_start",
        "psum_start",
        "pvary",
        "ragged_all_to_all",
        "reduce_scatter",
        "reduce_scatter_done",
        "reduce_scatter_start",
        "reduced_vary_cast",
        "reduced_vary_cast_p",
        "shard_map",
        "unreduced_pmax",
        "unreduced_pmin",
        "unreduced_psum",
        "unreduced_psum_start",
        "unreduced_reduce_scatter",
        "unreduced_reduce_scatter_start",
        "vary_unreduced_cast",
        "vary_unreduced_cast_p",
      }
    ),
  ),
  "callback": Family(
    "host callbacks and foreign functions",
    (
      "it runs Python or a foreign (FFI) function in the JAX runtime, which a TF graph "
      "cannot call back into; see docs/effects_and_sharding.md"
    ),
    frozenset(
      {
        "debug_callback",
        "debug_print",
        "ffi_call",
        # jax.debug.inspect_array_sharding: XLA's SPMD partitioner calls it at
        # compile time with the sharding it chose.
        "inspect_sharding",
        "io_callback",
        "pure_callback",
      }
    ),
  ),
  "gpu_library": Family(
    "NVIDIA GPU library call",
    (
      "a cuDNN library call (fused attention, RNN, scaled matmul) that exists only on "
      "NVIDIA GPUs; TF has no op that calls it"
    ),
    frozenset(
      {
        "cudnn_fusion",
        "dot_product_attention_bwd",
        "dot_product_attention_bwd_wrapper",
        "dot_product_attention_fp8_bwd",
        "dot_product_attention_fp8_bwd_wrapper",
        "dot_product_attention_fp8_fwd",
        "dot_product_attention_fp8_fwd_wrapper",
        "dot_product_attention_fwd",
        "dot_product_attention_fwd_wrapper",
        "rnn_bwd",
        "rnn_fwd",
        "scaled_matmul",
        "scaled_matmul_wrapper",
      }
    ),
  ),
  "pallas": Family(
    "Pallas kernel language",
    (
      "a Pallas/Mosaic/Triton kernel primitive: it lives inside a pallas_call kernel "
      "compiled for one accelerator, which no TF op can express"
    ),
    frozenset(
      {
        "_copysign",
        "add_dependency",
        "async_copy_scales_to_tmem",
        "async_copy_smem_to_tmem",
        "async_copy_sparse_metadata_to_tmem",
        "async_load",
        "async_prefetch",
        "async_store_smem",
        "async_store_tmem",
        "atomic_cas",
        "atomic_rmw",
        "barrier_arrive",
        "barrier_arrive_and_wait",
        "barrier_test",
        "barrier_wait",
        "bitcast",
        "commit_group",
        "commit_smem",
        "commit_tmem",
        "conv",
        "copy_gmem_to_smem",
        "copy_smem_to_gmem",
        "core_map",
        "custom_fusion",
        "debug_barrier",
        "debug_barrier_p",
        "delay",
        "dma_start",
        "dma_wait",
        "einshape_lo",
        "elementwise_inline_asm",
        "elementwise_inline_asm_p",
        "emit_pipeline",
        "get_barrier_semaphore",
        "get_global",
        "griddepcontrol_launch_dependents",
        "griddepcontrol_wait",
        "has_memory_space",
        "inline_mgpu",
        "inline_mgpu_p",
        "jaxpr_call",
        "layout_cast",
        "load",
        "masked_load",
        "masked_swap",
        "matmul_acc_lhs",
        "matmul_lhs_fifo",
        "matmul_pop",
        "matmul_pop_fifo",
        "matmul_push_rhs",
        "max_contiguous",
        "mgpu_atomic_store",
        "mma",
        "mosaic_gpu_p",
        "mosaic_gpu_reduce_max",
        "mosaic_gpu_reduce_min",
        "mosaic_gpu_reduce_prod",
        "mosaic_gpu_reduce_sum",
        "mpmd_map",
        "multimem_load_reduce",
        "multimem_store",
        "multiple_of",
        "num_programs",
        "pack_dtype",
        "pack_elementwise",
        "pallas_call",
        "pipeline_body",
        "print_layout",
        "prng_join",
        "prng_random_bits",
        "prng_seed",
        "prng_split",
        "program_id",
        "query_cluster_cancel",
        "reciprocal",
        "remove_memory_space",
        "roll",
        "run_scoped",
        "semaphore_read",
        "semaphore_signal",
        "semaphore_signal_multicast",
        "semaphore_signal_parallel",
        "semaphore_wait",
        "set_max_registers",
        "set_max_registers_p",
        "stochastic_round",
        "store",
        "tcgen05_commit_arrive",
        "tcgen05_mma",
        "tpu_custom_call",
        "trace_value",
        "try_cluster_cancel",
        "unpack_dtype",
        "unpack_elementwise",
        "wait_gmem_to_smem",
        "wait_load_tmem",
        "wait_smem_to_gmem",
        "wgmma",
        "wgmma_accumulator_deref",
        "wgmma_accumulator_deref_p",
        "wgmma_accumulator_store",
        "wgmma_accumulator_store_p",
        "wgmma_ref",
        "wgmma_wait",
      }
    ),
  ),
  "internal": Family(
    "internal to JAX",
    (
      "made and consumed inside JAX's own transformations (linearization, extended "
      "dtypes, shape-polymorphic exports); not expected in a function given to convert,"
      " and without a rule if one appears"
    ),
    frozenset(
      {
        "call_hi_primitive_linearized",
        "create_linear",
        "custom_jvp_call_jaxpr",
        "custom_lin",
        "dce_sink",
        "dimension_size",
        "from_edtype",
        "remat_opt",
        "shape_assertion",
        # lax.stage binds through the trace's stage_value, which returns a
        # traced value itself: only eager evaluation runs it, so it never
        # appears in a jaxpr.
        "stage",
        "tie",
        "to_edtype",
        "unreachable",
        "zeros_like",
      }
    ),
  ),
}


def family_of(primitive_name: str) -> Family | None:
  for family in FAMILIES.values():
    if primitive_name in family.primitives:
      return family
  return None

"""The JAX internals (``jax._src``) the package needs, and why no public API serves.

Use them as attributes: `jax_private.solve_dim_vars(...)`, or
`from jax2tf.internals.jax_private import solve_dim_vars`. Each is imported on
first use from the path in `REGISTRY`; tests/test_internals.py imports all of
them on every supported JAX (0.10 and 0.12), so a release that moves one fails
there, naming it. Version differences are handled here and only here: a
symbol that lives at different paths in different releases gets a tuple of
paths, newest first (see jax2tf/internals/__init__.py); on jax 0.10.2 and 0.12
every entry below still has a single path.

Where a public alias exists on every supported release, use it instead (e.g.
`jax.extend.core.primitives`, `jax.lax.linalg`, `jax.interpreters.mlir`,
`jax.extend.mlir`); an entry belongs here only when there is none.
"""

from typing import Any

import jax

from jax2tf import internals

REGISTRY: dict[str, str | tuple[str, ...]] = {
  # -- effects: a JAX primitive with its own effect (call_tf) must add the
  # effect type to the sets of effects JAX allows under control flow, remat
  # and custom derivatives, and to the ordered ones. Only `Effect` and
  # `mlir.lowerable_effects` are public.
  "control_flow_allowed_effects": "jax._src.effects:control_flow_allowed_effects",
  "custom_derivatives_allowed_effects": "jax._src.effects:custom_derivatives_allowed_effects",
  "remat_allowed_effects": "jax._src.effects:remat_allowed_effects",
  "ordered_effects": "jax._src.effects:ordered_effects",
  # -- lowering: `jax.interpreters.mlir` has `shape_tensor` but not the
  # evaluation of symbolic dimensions in a lowering context that feeds it.
  "eval_dynamic_shape_as_tensor": "jax._src.interpreters.mlir:eval_dynamic_shape_as_tensor",
  # The lowering rules JAX registered, default and per platform: reading
  # another platform's rule (the portable TPU eigh) has no public API.
  "default_lowerings": "jax._src.interpreters.mlir:_lowerings",
  "platform_lowerings": "jax._src.interpreters.mlir:_platform_specific_lowerings",
  # Emits those rules for each platform a module is exported for (a switch on
  # the platform index where they differ), as JAX does for a primitive that
  # has no override.
  "lower_per_platform": "jax._src.interpreters.mlir:lower_per_platform",
  # Importing these registers the pure-JAX (TPU) eigh and svd lowerings,
  # which nothing public triggers on CPU.
  "tpu_eigh_lowerings": "jax._src.tpu.linalg.eigh:",
  "tpu_svd_lowerings": "jax._src.tpu.linalg.svd:",
  # -- primitives that need a rule (or a portable lowering) but are in
  # neither `jax.extend.core.primitives` nor `jax.lax` on jax 0.10 and 0.12.
  "geqrf_p": "jax._src.lax.linalg:geqrf_p",  # jax.lax.linalg exposes qr only
  "geqp3_p": "jax._src.lax.linalg:geqp3_p",  # public: scipy.linalg.qr(pivoting=True) only
  # The JAX function JAX lowers qr with: geqrf or geqp3, then householder_product.
  "qr_expansion": "jax._src.lax.linalg:_qr_lowering",
  "ragged_dot_general_p": "jax._src.lax.lax:ragged_dot_general_p",
  "composite_p": "jax._src.lax.lax:composite_p",  # public: lax.composite only
  "empty_p": "jax._src.lax.lax:empty_p",  # only its sibling empty2_p is public
  "platform_index_p": "jax._src.lax.control_flow:platform_index_p",  # lax.platform_dependent
  # 0.12 has it as primitives.call_p, 0.10 has no public name for it.
  "eval_jaxpr_p": "jax._src.lax.eval_jaxpr:eval_jaxpr_p",
  "layout_constraint_p": "jax._src.pjit:layout_constraint_p",
  "reshard_p": "jax._src.pjit:reshard_p",  # public: jax.sharding.reshard only
  # public: jax.custom_batching.custom_vmap and jax.custom_derivatives.linear_call only
  "custom_vmap_p": "jax._src.custom_batching:custom_vmap_p",
  "linear_call_p": "jax._src.custom_derivatives:linear_call_p",
  # public: jax.experimental.xla_metadata.set_xla_metadata only
  "xla_metadata_value_p": "jax._src.xla_metadata:xla_metadata_value_p",
  "dim_as_value_p": "jax._src.export.shape_poly:dim_as_value_p",
  # JAX's high-level primitives (searchsorted and nonzero on jax 0.12) bind
  # this one primitive with the operation object, which expands itself.
  "call_hi_primitive_p": "jax._src.hijax:call_hi_primitive_p",
  # Key-array primitives: only random_{bits,fold_in,seed,split}_p are public.
  "random_wrap_p": "jax._src.random.prng:random_wrap_p",
  "random_unwrap_p": "jax._src.random.prng:random_unwrap_p",
  "iota_2x32_shape_p": "jax._src.random.prng:iota_2x32_shape_p",
  "random_clone_p": "jax._src.random.core:random_clone_p",
  # -- other internals.
  # The sampler JAX lowers random_gamma_p with, traced to expand the
  # primitive into JAX ops; tracing `jax.random.gamma` binds the primitive.
  "gamma_impl": "jax._src.random.core:_gamma_impl",
  # The physical aval of a key array (its key data); jax.random exposes the
  # conversion of values (key_data) but not of avals.
  "physical_aval": "jax._src.core:physical_aval",
  # A function's dimension variables as expressions of its argument
  # dimensions, with the constraints that remain; jax.export solves them
  # only inside its own lowering.
  "solve_dim_vars": "jax._src.export.shape_poly:solve_dim_vars",
  # The kind (== or >=) of a shape constraint that solve_dim_vars returns;
  # the constraints themselves are private.
  "Comparator": "jax._src.export.shape_poly:Comparator",
  # The calling-convention flag as a thread-local context manager:
  # `jax.config` reads and sets it only globally.
  "export_calling_convention_version": "jax._src.config:jax_export_calling_convention_version",
  # -- primitives that graph rules are registered on, with no public name.
  "compute_on_p": "jax._src.compute_on:compute_on_p",  # public: compute_on(2) only
  "relayout_p": "jax._src.pjit:relayout_p",  # jax 0.12: experimental.layout.explicit_layout
  # jax 0.12; 0.10 defines it in the public jax.experimental.scheduling_groups.
  "xla_metadata_call_p": "jax._src.xla_metadata:xla_metadata_call_p",
  "scaled_dot_p": "jax._src.lax.scaled_dot:scaled_dot_p",  # public: lax.scaled_dot only
  # The counter-based hashes of the 'philox2x32', 'philox4x32' and
  # 'threefry4x32' key implementations (jax.random.key(..., impl=...)), and
  # the functions of lax operations JAX lowers them with.
  "philox2x32_p": "jax._src.random.philox2x32:philox2x32_p",
  "philox2x32_expansion": "jax._src.random.philox2x32:_philox2x32_lowering",
  "philox4x32_p": "jax._src.random.philox4x32:philox4x32_p",
  "philox4x32_expansion": "jax._src.random.philox4x32:_philox4x32_lowering",
  "threefry4x32_p": "jax._src.random.threefry4x32:threefry4x32_p",
  "threefry4x32_expansion": "jax._src.random.threefry4x32:_threefry4x32_lowering",
  "check_p": "jax._src.checkify:check_p",  # public: checkify.check and debug_check only
  "call_exported_p": "jax._src.export._export:call_exported_p",  # public: Exported.call only
  # Whether JAX is tracing: jax.core has no public query (a converted
  # function must not be called then; jax2tf/nesting.py).
  "trace_state_clean": "jax._src.core:trace_state_clean",
  # The JAX function (a loop of Householder reflections) JAX lowers ormqr with.
  "ormqr_expansion": "jax._src.lax.linalg:_ormqr_lowering",
}

# Symbols that only some supported releases have: None on the others.
OPTIONAL = frozenset({"relayout_p", "xla_metadata_call_p"})


def __getattr__(name: str) -> Any:
  return internals.lazy_getattr(globals(), REGISTRY, name, _owner, OPTIONAL)


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(REGISTRY))


def _owner() -> str:
  return f"jax {jax.__version__}"

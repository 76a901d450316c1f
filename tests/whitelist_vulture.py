"""Names the dead-code finder cannot see used: read by name at run time, or public API used only by tests.

vulture (``tests/test_dead_code.py``) reads this file as source and never runs it; ``_.name`` marks any
definition called ``name`` as used. Add a name to the group that says why nothing in the tree calls it,
with the file that defines it, or to a new group with a comment of its own.
"""

# Read by a library we call: torch's nn.Module repr hook, a plotly trace property set in place, the
# learning rate gensim's PoincareModel.train reads.
_.extra_repr  # attention/c_hida.py
_.showlegend  # viz/embeddings.py
_.train_alpha  # embeddings/benchmark.py

# Trainer callbacks: the trainer calls whichever of on_step_end / on_eval a callback defines (getattr).
_.on_step_end  # jobs/kinds.py, train/lm_study.py
_.on_eval  # jobs/kinds.py, train/cli.py

# Named by a string: job kinds and warm-ups "module:function", tile classes by their class name
# (fused_geometry.tile_geometry looks TileGeometry.__subclasses__() up by Geometry.tile).
_.preload  # tasks/text.py (jobs/local.py SPARE_WARM)
_.kv_job  # train/lm_study_kv.py
_.Poincare  # attention/fused_geometry.py

# Fields of typed results and state kept on an object after a run: part of the record a caller reads
# (asdict / to_dict, labelled tables), not all drawn by a page yet.
_.retrieval_full  # compression/attention_effect.py AttentionEffect
_.bytes_per_key  # compression/attention_effect.py AttentionEffect
_.analytic_max  # compression/worst_case.py WorstCase
_.worst_key  # compression/worst_case.py WorstCase
_.nearest_key_distance  # labs/attention.py AttentionStats
_.retrieval_weight  # labs/attention.py AttentionStats
_.retrieval_bound  # labs/attention.py AttentionStats
_.unit_summary  # labs/routing.py QualityLab
_.small_summary  # labs/routing.py QualityLab
_.ratio_basin  # landscape/two_key.py PLProfile
_.flipped_fit  # train/memorisation.py MemorisationResult
_.log_x  # verdicts.py Evidence
_.log_y  # verdicts.py Evidence
_.running_regret  # attention/c_hida.py CHIDA after forward
_.summary_values  # attention/c_hida.py CHIDA after forward
_.clean_train  # tasks/noisy.py

# Public API whose only callers are tests (tests/ is not scanned: test files would flood the report).
_.precision_floor  # attention/flex.py
_.flex_formula  # attention/flex.py
_.process_threads  # device.py
_.ambient_dim  # embeddings/model.py
_.compare_geometries  # embeddings/compare.py (the page runs compare_steps in a worker)
_.progress_text  # labs/embeddings.py
_.factors_cache_info  # extras/hankel.py
_.cayley_dense  # extras/orthogonal.py
_.jobs_of  # jobs/runner.py
_.run_metrics  # labs/training.py
_.descent_study  # landscape/study.py
_.compare_routers  # routing/compare.py
_.retired  # routing/dmg.py DMG, prototypes retired so far
_.hcc_stored_bits  # theory/compression.py
_.hyperbolic_volume_asymptote  # theory/geometry.py
_.l_hida_error_bound_summary  # theory/hida.py
_.concentration_tail_paper  # theory/statements.py
_.far_key_relative_bound  # theory/statements.py
_.hyperbolic_lower_bound_paper  # theory/statements.py
_.poincare_volume_element  # theory/statements.py
_.ida_noise_test_error_bound  # theory/training.py
_.hypergate_gradient_lower_bound  # theory/training.py
_.softmax_memorisation_test_error  # theory/training.py
_.subtree_closure  # wordnet/closure.py
_.write_closure_csv  # wordnet/closure.py
_.write_subset  # wordnet/glosses.py

# Old names or values nothing needs, in files edited elsewhere at the moment: for their owners to remove.
_.__getattr__  # claims/registry.py: old verdict imports; only tests/test_claims_imports.py still uses one
_.best_map  # embeddings/benchmark.py: an unpacked value nothing reads

"""Labs: the measurements behind the pages, above the kernels and below the claims.

A lab is the measurement behind one page: a frozen, hashable config in (a page caches on it), checked once
on construction, and a typed result out (dataclasses of numbers and arrays with named fields, built and read
by name, never by position; no figures), no Streamlit. The page draws the
widgets, calls its lab and hands the result to a ``viz`` builder; the claims call the same labs with
their own settings, so a page and ``python -m georesolver_core claims`` show the same numbers.

- ``attention``: the Attention page: keys, one query, IDA and softmax weights, the eps sweep, ``AttentionStats``;
- ``samplers``: point samplers of the three geometries (random, clustered);
- ``key_set``: the kernel matrix of a key set, its effective rank, separation and nearest-neighbour radii;
- ``softmax_width``: Theorem 1's orthogonal keys and the width and norm softmax needs to retrieve;
- ``lipschitz``: Lemma 1's query Jacobian and its supremum, searched by gradient ascent;
- ``hida``: the HIDA page and its claims: FP-HIDA's pattern, anchors and summaries in the disk, errors
  against Dense-HIDA, C-HIDA's stream and regret, FP-HIDA's retrieval;
- ``cost_scaling``: the HIDA family's time and memory against n, slopes judged against Proposition 1
  (``python -m georesolver_core bench --scaling``);
- ``op_count``: the same cost classes counted in arithmetic operations instead of seconds;
- ``compression``: the Compression page: HCC against a baseline at the same storage, the bit sweep, the
  memory table, and attention with quantised keys (``compression_lab(CompressionConfig)``);
- ``routing``: the Routing & memory page: GSR's decisions on the sphere, Theorem 10.1's error against K
  with its verdicts, three routers' loads, a DMG stream, the distributed traffic report;
- ``landscapes``: the Landscapes page: the two-key PL constants, the 2-D patch with descent, Lemma 2's
  Hessian spread, the slice of a trained model;
- ``training``: the Training page: a run built from its settings, trained a chunk at a time, its
  metrics, samples and attention, and Theorem 7.1 judged on its HyperGates; ``training_runs``: a run
  followed across the worker boundary, with why it stopped (``train.StopReason``);
- ``embeddings``: the Embeddings page besides its trainer: the schedule, the points each view draws,
  radius by depth;
- ``orthogonal``, ``hankel``: the two neighbour pages (seeds 003, 004) over the measurements in ``extras``.

A lab judges a measurement beside its bound with the claims' rules (``verdicts``, a leaf module outside
the claims package), so that a page shows the verdict the claims would give, and never imports a claim.

The kernels (``attention``) never import a lab: the arrows run attention -> labs -> claims, and
bench -> labs (the benchmark's command line runs ``cost_scaling``; what both need, the peak-memory probe,
is the leaf module ``georesolver_core.peak_memory``).
"""

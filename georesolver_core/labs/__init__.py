"""Labs: the measurements behind the pages, above the kernels and below the claims.

A lab is the measurement behind one page: a frozen, hashable config in (a page caches on it), a
typed result out (dataclasses of numbers and arrays, no figures), no Streamlit. The page draws the
widgets, calls its lab and hands the result to a ``viz`` builder; the claims call the same labs with
their own settings, so a page and ``python -m georesolver_core claims`` show the same numbers.

- ``attention``: the Attention page: keys, one query, IDA and softmax weights, the eps sweep, ``LabStats``;
- ``samplers``: point samplers of the three geometries (random, clustered);
- ``key_set``: the kernel matrix of a key set, its effective rank, separation and nearest-neighbour radii;
- ``softmax_width``: Theorem 1's orthogonal keys and the width and norm softmax needs to retrieve;
- ``lipschitz``: Lemma 1's query Jacobian and its supremum, searched by gradient ascent;
- ``hida``: the HIDA page and its claims: FP-HIDA's pattern, anchors and summaries in the disk, errors
  against Dense-HIDA, C-HIDA's stream and regret, FP-HIDA's retrieval;
- ``cost_scaling``: the HIDA family's time and memory against n, slopes judged against Proposition 1
  (``python -m georesolver_core bench --scaling``);
- ``op_count``: the same cost classes counted in arithmetic operations instead of seconds.
- ``compression``: the Compression page: HCC against a baseline at the same storage, the bit sweep, the
  memory table, and attention with quantised keys.

The kernels (``attention``) never import a lab: the arrows run attention -> labs -> claims.
"""

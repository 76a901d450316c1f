"""Seeds 003 (the E-Delta-MHC-Geo Transformer) and 004 (Dyadic Hankel Boundary Attention), statement by statement
(see ``claims.inventory``)."""

from georesolver_core.claims.audit_entry import Statement

NO_JPMHC = "not measurable here: the project has no JPmHC"


def _t(section: str, words: str, keys: tuple[str, ...] = (), reason: str = "") -> Statement:
    return Statement("003", section, words, keys, reason)


def _h(section: str, words: str, keys: tuple[str, ...] = (), reason: str = "") -> Statement:
    return Statement("004", section, words, keys, reason)


SEED003 = (
    _t(
        "section 1 (mHC)",
        "Manifold-Constrained Hyper-Connections (mHC): Uses Sinkhorn-Knopp projections to create doubly "
        "stochastic mixing matrices. While approximately orthogonal, errors accumulate over long sequences, and "
        "the projection is computationally iterative.",
        ("orth-sinkhorn-accumulation",),
        "'computationally iterative' describes how mHC is computed (a definition)",
    ),
    _t(
        "section 1 (DDL)",
        "Deep Delta Learning (DDL): Replaces the identity shortcut with an input-dependent Householder operator "
        "(H_beta = I - beta k k^T). While adaptive, it is only strictly orthogonal when the magnitude parameter "
        "beta ∈ {0, 2}. During training, beta varies continuously, breaking isometry and causing gradient "
        "instability.",
        ("orth-ddl-defect", "orth-norm-drift"),
        "'gradient instability' names no quantity to measure (the broken isometry is measured)",
    ),
    _t(
        "section 1",
        "Specifically, the Cayley transform, a common tool for generating rotations, is algebraically incapable "
        "of producing an eigenvalue of lambda = -1 (a pure negation/reflection), limiting its utility for tasks "
        "requiring rapid sign inversion or correction.",
        ("orth-cayley-spectrum", "orth-exact-pi"),
    ),
    _t(
        "section 2.1",
        "Skew-Symmetric Generator: A matrix A(x) = u(x)v(x)^T - v(x)u(x)^T is constructed. Crucially, this matrix "
        "is skew-symmetric (A^T = -A) by algebraic construction, regardless of how u and v are derived.",
        ("orth-cayley-orthogonal",),
        "the skew-symmetry is exact algebra, (u v^T - v u^T)^T = v u^T - u v^T; what it buys, Q orthogonal, "
        "is measured",
    ),
    _t(
        "section 2.1",
        "Q(x) = (I + beta(x)/2 A(x))^-1 (I - beta(x)/2 A(x)), where beta(x) is a learnable, input-dependent "
        "magnitude.",
        reason="a definition (the data-dependent Cayley transform)",
    ),
    _t(
        "section 2.1 (Theorem 4.1)",
        "The authors prove (Theorem 4.1) that because A(x) is skew-symmetric, Q(x) is unconditionally orthogonal "
        "(Q^T Q = I) and norm-preserving for any input and any value of beta(x). This contrasts with DDL, which "
        "loses orthogonality when beta ∉ {0, 2}.",
        ("orth-cayley-orthogonal", "orth-norm-drift", "orth-ddl-defect"),
    ),
    _t(
        "section 2.2 (Theorem 4.6)",
        "A known limitation of the Cayley transform is that it cannot produce an eigenvalue of lambda = -1 "
        "(Theorem 4.6), as it maps to the special orthogonal group SO(n) (determinant +1).",
        ("orth-cayley-spectrum", "orth-cayley-det"),
    ),
    _t(
        "section 2.2",
        "G_gamma(X) = gamma(X) Q(X) X + (1 - gamma(X)) H_2(k(X)) X",
        reason="a definition (the hybrid operator)",
    ),
    _t(
        "section 2.2",
        "Midpoint Collapse Regularization: ... a regularizer L_gate = 4 gamma (1 - gamma) is applied.",
        reason="a definition of the regulariser (its effect is orth-midpoint-gradient and orth-negation-gate)",
    ),
    _t(
        "section 2.2",
        'This encourages gamma to collapse to the boundaries (0 or 1), effectively "jumping" between the '
        "rotation and reflection components of the orthogonal group.",
        ("orth-negation-gate", "orth-hybrid-defect"),
    ),
    _t(
        "section 2.3",
        "The architecture includes learned pre/post mappings (H_pre, H_post) similar to mHC, but the residual "
        "mixing is now performed by the exact, input-adaptive orthogonal operator G_gamma.",
        ("orth-hybrid-defect",),
    ),
    _t(
        "section 3 (key contributions)",
        "Unconditional Orthogonality: The first architecture to provide exact, non-iterative orthogonality for all "
        "inputs and all training steps via a data-dependent Cayley transform, without relying on soft penalties "
        "or projections.",
        ("orth-cayley-orthogonal",),
        "'the first architecture' is a priority claim about the literature, not measurable here",
    ),
    _t(
        "section 3 (key contributions)",
        "Hybrid Access to O(n): A novel gating mechanism that allows the model to access both connected components "
        'of the orthogonal group (SO(n) for rotation and O(n) \\ SO(n) for reflection), solving the "negation '
        'problem" inherent to pure Cayley methods.',
        ("orth-hybrid-components",),
    ),
    _t(
        "section 3 (key contributions)",
        'Theoretical Analysis of Regularization: A "Universal Zero-Gradient Theorem" (Theorem 7.3) explaining the '
        "behavior of symmetric regularizers at the midpoint, providing a principled justification for the "
        "midpoint collapse strategy.",
        ("orth-midpoint-gradient",),
    ),
    _t(
        "section 3 (key contributions)",
        "Empirical Validation: Rigorous testing against four baselines (including the concurrent JPmHC) with "
        "matched parameter counts (~1.79M), demonstrating superior stability and geometric fidelity.",
        reason="a description of the seed's experiments (its setting); the results it summarises are the section "
        "4 claims",
    ),
    _t(
        "section 4",
        "Experiments were conducted on synthetic benchmarks designed to isolate geometric properties, with results "
        "averaged over three random seeds.",
        reason="the seed's setting (the project's runs name their own seeds)",
    ),
    _t(
        "section 4 (echo stability)",
        "On a stability benchmark (predicting echo sequences over 127 steps), E-Delta-MHC-Geo achieved the lowest "
        "loss, outperforming JPmHC by 1.9x and GPT by 3.8x.",
        ("orth-echo-lowest-loss", "orth-echo-vs-gpt"),
        "the JPmHC half: the project has no JPmHC (the GPT half is orth-echo-vs-gpt, the lowest loss "
        "orth-echo-lowest-loss)",
    ),
    _t(
        "section 4 (echo stability)",
        "It maintained norm preservation with a mean deviation of only 0.001, validating the theoretical isometry.",
        ("orth-echo-norm-deviation",),
    ),
    _t(
        "section 4 (gyroscope)",
        "On a task requiring continuous rotation prediction, JPmHC achieved the lowest absolute loss (benefiting "
        "from a wider representation, n_embd = 512).",
        reason=NO_JPMHC,
    ),
    _t(
        "section 4 (gyroscope)",
        "However, E-Delta-MHC-Geo significantly outperformed non-geometric baselines (3.7x over GPT) despite using "
        "33% fewer layers and a narrower representation (n_embd = 128).",
        ("orth-gyroscope",),
        "the '33% fewer layers, n_embd = 128' half describes the seed's models (a setting, not a result); the 3.7x "
        "is orth-gyroscope",
    ),
    _t(
        "section 4 (negation)",
        "In a diagnostic task requiring the model to learn y = -x, the E-Delta-MHC-Geo gate successfully collapsed "
        "to gamma ~ 0.05, selecting the Householder reflection branch to achieve 0.96 cosine alignment.",
        ("orth-negation-gate", "orth-negation-cosine"),
    ),
    _t(
        "section 4 (negation)",
        "In contrast, JPmHC (lacking a reflection branch) and DDL (which struggled to converge beta to exactly 2) "
        "failed to achieve exact negation alignment.",
        ("orth-ddl-negation",),
        "the JPmHC half: the project has no JPmHC (that a pure rotation cannot negate is orth-cayley-spectrum)",
    ),
    _t(
        "section 4 (near-pi rotation)",
        "The model demonstrated robustness in approaching the boundary between rotation and reflection, "
        "converging to low loss even for angles close to pi (e.g., 179.9 degrees), though exact pi requires the "
        "reflection branch.",
        ("orth-near-pi", "orth-exact-pi"),
    ),
    _t(
        "section 5",
        "It retains the input adaptivity of Deep Delta Learning (DDL) and the multi-stream framework of mHC.",
        reason="a description of the design (what it is built from), not a result",
    ),
    _t(
        "section 5",
        "It provides exact algebraic orthogonality that holds unconditionally, unlike the approximate "
        "orthogonality of Sinkhorn projections or the conditional orthogonality of DDL.",
        ("orth-cayley-orthogonal", "orth-sinkhorn-accumulation", "orth-ddl-defect"),
    ),
    _t(
        "section 5",
        "It uniquely solves the negation problem by hybridizing Cayley rotations with Householder reflections, "
        "allowing the model to access the full orthogonal group O(n).",
        ("orth-hybrid-components", "orth-negation-cosine"),
        "'uniquely' compares with the whole literature: not measurable here",
    ),
    _t(
        "section 5",
        "The authors emphasize that while JPmHC may excel in tasks requiring high-dimensional per-stream "
        "expressivity (due to its wider architecture), E-Delta-MHC-Geo offers superior stability, norm "
        "preservation, and geometric exactness with fewer layers.",
        ("orth-echo-lowest-loss", "orth-echo-norm-deviation", "orth-norm-drift"),
        f"the JPmHC half: {NO_JPMHC}",
    ),
    _t(
        "section 5",
        "The work establishes a theoretical and empirical foundation for using input-adaptive, unconditional "
        "orthogonal transformations, suggesting that the structure of inter-layer transformations is as critical "
        "as their quantity.",
        reason="a suggestion with no quantity to measure",
    ),
    _t(
        "section 5",
        "The authors note that the current results are based on controlled synthetic benchmarks and that scaling "
        "to large-scale natural language or vision tasks remains a direction for future work.",
        reason="the seed's scope and plans, not a result",
    ),
)

SEED004 = (
    _h(
        "idea description",
        "Replace dense attention between tokens on opposite sides of a one-dimensional boundary or segment split "
        "with a dyadic low-rank approximation of a Cauchy/Hankel distance kernel.",
        reason="a definition (the method)",
    ),
    _h(
        "idea description",
        "Each distance-scale block uses O(log(1/eps)) features, and the number of active scales grows only "
        "logarithmically with context length after discarding a narrow boundary layer.",
        ("hankel-rank-rule", "hankel-active-scales"),
    ),
    _h(
        "idea description",
        "This is especially suitable for a relative-position attention branch or state-space-like long-range "
        "branch, rather than arbitrary content-dependent softmax attention.",
        reason="advice on where to use the method, with no quantity to measure",
    ),
    _h(
        "mathematical statement",
        "The paper studies S = P_A Q_B P_A, where P_E is multiplication by the indicator of E, Q_E = F^-1 P_E F, "
        "and A = c A_0, B = B_0. The nontrivial interaction is the off-diagonal operator T = P_(A^c) Q_B P_A.",
        reason="a definition (the operators studied)",
    ),
    _h(
        "mathematical statement",
        "In one dimension, boundary-distance coordinates split every one-sided, one-scale piece into two summands "
        "carrying the singular values of the fixed Hankel kernel K(s, r) = 1/(2 pi (s + r)), with s, r > 0.",
        ("hankel-kyfan-piece",),
        "the change of coordinates itself is a step of the source paper's operator proof; the project builds the "
        "piece from it (two summands, stacked) and measures its singular values",
    ),
    _h(
        "mathematical statement",
        "For the restriction s ∈ (0, inf), r ∈ [h, 2h], the Bernstein-ellipse argument gives s_(N+1)(K) <= 4^-N, "
        "where s_j(K) is the j-th singular value and h > 0 is the dyadic scale.",
        ("hankel-sv-decay",),
    ),
    _h(
        "mathematical statement",
        "Ky Fan assembly gives the scale-uniform piece estimate s_n <= 2^(3-n).",
        ("hankel-kyfan-piece",),
    ),
    _h(
        "mathematical statement",
        "The global plunge estimate is Lambda_eps <= C(A_0, B_0) L~ [1 + ln_+(c a / L~)], with L~ = "
        "ln[1/(eps(1 - eps))], a the largest component length of A_0, and Lambda_eps the number of eigenvalues of "
        "S in (eps, 1 - eps).",
        ("hankel-plunge",),
    ),
    _h(
        "mathematical statement",
        "The adaptation treats each attention cross-block as a discretized K(s, r); the singular-value decay "
        "implies rank N >= ceil(log_4(1/eps)) for operator-norm error at most eps per dyadic block.",
        ("hankel-rank-rule", "hankel-output-error"),
    ),
    _h(
        "implementation notes",
        "For every token i < b and j >= b, define positive distances s_i = b - i + delta and r_j = j - b + delta, "
        "with delta >= 1 preventing a singularity. Partition the r-coordinates into dyadic blocks B_k = [h_k, "
        "2h_k). For every block, form the sampled matrix H_k[i, j] = 1/(s_i + r_j).",
        reason="a definition (the discretised cross block)",
    ),
    _h(
        "implementation notes",
        "During inference, compute the cross-block output as U_k(V_k^T V_tokens), costing O((|I_k| + |J_k|) N d_v) "
        "rather than O(|I_k| |J_k| d_v).",
        ("hankel-speedup", "hankel-output-error"),
    ),
    _h(
        "implementation notes",
        "Success means at least 2x lower cross-block attention cost or KV memory at 8K/32K with less than 1% "
        "perplexity degradation, plus measured singular-value decay close to the predicted geometric curve.",
        ("hankel-sv-decay", "hankel-speedup"),
        "the language-model half (perplexity of a 4-layer Transformer on TinyStories or WikiText-103 at 8K/32K "
        "contexts) is an experiment plan the project does not run; its small practical benchmark is "
        "hankel-null-benchmark",
    ),
    _h(
        "verification (mechanism check)",
        "Across h=4..64, every tested normalized singular value satisfied the predicted s_(N+1) <= 4^-N bound; "
        "observed ranks were 2,3,3 for eps=1e-2,1e-3,1e-4 versus conservative bounds 4,5,7 and remained "
        "independent of h.",
        ("hankel-sv-decay", "hankel-observed-ranks", "hankel-rank-rule"),
    ),
    _h(
        "verification (mechanism check)",
        "Rank-4 factorization produced about 1e-6 relative output error and measured speedups of 2.1x-11.5x as "
        "block size grew, confirming the mechanism but not a full language-model win.",
        ("hankel-rank4-error", "hankel-speedup"),
    ),
    _h(
        "practical benchmark",
        "Paired seeds: 8. Baseline mean: 0. Idea mean: 0. p-value: 0.53235. Paired wins: 5/8. Benchmark verdict: "
        "no measurable effect.",
        ("hankel-null-benchmark",),
    ),
    _h(
        "verification (limitations)",
        "Only a CPU toy discretization of one relative-position Hankel cross-block was tested. No learned gates, "
        "reverse-direction integration, multi-block attention, GPU kernel implementation, Transformer training, "
        "perplexity, KV-cache memory, or context lengths beyond the toy block sizes were evaluated; timing is "
        "sensitive to BLAS and allocation effects.",
        reason="a description of the seed's own verification (its scope), not a result",
    ),
)

STATEMENTS = (*SEED003, *SEED004)

// Inverse-distance attention on CPU, forward and backward, one native call each (sections 2.1, 5.1, 8.1).
//
//     o_i = sum_j s_ij v_j / S_i,   s_ij = 1 / (phi(x_ij) + eps~),   S_i = sum_j s_ij
//
// with x from one matrix product per tile and phi the geometry's squared distance up to a constant
// (attention/fused_geometry.py has the table): Euclidean phi = |q|^2 + |k|^2 - 2 q.k; Poincare
// phi = arcosh(1 + w)^2, w = A_i B_j |q_i - k_j|^2; sphere phi = arccos(q.k)^2 on unit vectors.
//
// Layout and work split follow torch's CPU flash-attention kernel (aten/src/ATen/native/cpu/
// FlashAttentionKernel.cpp): key blocks streamed through per-thread tile buffers, one at::parallel_for
// over (head x query block) forward and over (head x key-block group) backward, BLAS (the MKL that torch
// links) for the tile products and ATen's Vectorized for the elementwise work. Unlike a softmax there is
// no running maximum: every score lies in (0, 1/eps~], so the forward keeps the plain row sum S_i.
//
// The backward recomputes each tile once and uses, with g the output gradient and Dg_i = g_i . o_i,
//     dL/dv_j = sum_i (s_ij / S_i) g_i,   dL/ds_ij = (g_i . v_j - Dg_i) / S_i,   dL/dphi_ij = -s_ij^2 dL/ds_ij,
// then H = dL/dx = dL/dphi phi'(x), and the gradients of q and k as two tile products H K, H^T Q plus
// per-row / per-column sums (the Python side assembles them, O(T d)). The transcendental work of a pair
// (log1p and sqrt on the ball, acos on the sphere) is done once per pass: the backward's phi' comes from
// the same t = arcosh(1 + w) (or theta) as its recomputed score.
//
// Exactness near zero distance (DESIGN.md section 4): the matrix-product form cancels for q ~ k (and on
// the sphere for q ~ +-k). Pairs whose x lies within a factor tau of that rounding noise are recomputed
// from the difference q_i - k_j, and their gradient is taken from the exact formula and left out of H.
#include <torch/extension.h>

#include <ATen/Parallel.h>
#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <cmath>
#include <vector>

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*);
}

namespace {

enum Geometry { EUCLIDEAN = 0, POINCARE = 1, SPHERE = 2 };

// Row-major C (M x N) = alpha op(A) op(B) + beta C: the column-major BLAS computes C^T = op(B)^T op(A)^T.
void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
  const char a = ta ? 'T' : 'N', b = tb ? 'T' : 'N';
  sgemm_(&b, &a, &N, &M, &K, &alpha, B, &ldb, A, &lda, &beta, C, &ldc);
}
void gemm(bool ta, bool tb, int M, int N, int K, double alpha, const double* A, int lda, const double* B,
          int ldb, double beta, double* C, int ldc) {
  const char a = ta ? 'T' : 'N', b = tb ? 'T' : 'N';
  dgemm_(&b, &a, &N, &M, &K, &alpha, B, &ldb, A, &lda, &beta, C, &ldc);
}

// The sum of a vector's lanes.
template <typename T>
T hsum(const at::vec::Vectorized<T>& v) {
  T lanes[at::vec::Vectorized<T>::size()];
  v.store(lanes);
  T total = 0;
  for (T x : lanes) total += x;
  return total;
}

// What one call needs, as raw pointers into contiguous (BH, n, d) / (BH, m, d) / (BH, n) / (BH, m) tensors.
template <typename T>
struct Problem {
  int geometry;
  int64_t BH, n, m, d, dv, bq, bk;
  bool causal;
  T eps, tau, c;
  const T *q, *k, *v;    // unit vectors on the sphere
  const T *nq, *nk;      // |q|^2, |k|^2 (Euclidean, Poincare)
  const T *A, *B;        // Poincare: 2c / (1 - c|q|^2), 1 / (1 - c|k|^2), clamped as in geometry/poincare.py
  const T *ma, *mb;      // Poincare: 1 where that clamp is inactive, else 0 (the point sits on the rim)

  int64_t visible(int64_t i, int64_t j0, int64_t len) const {
    // causal: query i sees keys j <= i + m - n; columns of the tile from j0 on
    if (!causal) return len;
    return std::max<int64_t>(0, std::min<int64_t>(len, i + (m - n) - j0 + 1));
  }

  // The exact score pieces of one pair from the difference q_i - k_j: returns phi.
  T exact_phi(int64_t h, int64_t i, int64_t j) const {
    const T* qi = q + (h * n + i) * d;
    const T* kj = k + (h * m + j) * d;
    if (geometry == SPHERE) {
      T dm = 0, dp = 0;
      for (int64_t e = 0; e < d; ++e) {
        dm += (qi[e] - kj[e]) * (qi[e] - kj[e]);
        dp += (qi[e] + kj[e]) * (qi[e] + kj[e]);
      }
      T theta = 2 * std::atan2(std::sqrt(dm), std::sqrt(dp));
      return theta * theta;
    }
    T D = 0;
    for (int64_t e = 0; e < d; ++e) D += (qi[e] - kj[e]) * (qi[e] - kj[e]);
    if (geometry == EUCLIDEAN) return D;
    T w = A[h * n + i] * B[h * m + j] * D;
    T t = std::log1p(w + std::sqrt(w * (w + 2)));
    return t * t;
  }

  // Accumulate the exact dL/dq_i, dL/dk_j of one pair (dphi = dL/dphi) into gq (d) and gk (d).
  void exact_grad(int64_t h, int64_t i, int64_t j, T dphi, T* gq, T* gk) const {
    const T* qi = q + (h * n + i) * d;
    const T* kj = k + (h * m + j) * d;
    if (geometry == EUCLIDEAN) {
      for (int64_t e = 0; e < d; ++e) {
        T g = 2 * dphi * (qi[e] - kj[e]);
        gq[e] += g;
        gk[e] -= g;
      }
    } else if (geometry == POINCARE) {
      T D = 0;
      for (int64_t e = 0; e < d; ++e) D += (qi[e] - kj[e]) * (qi[e] - kj[e]);
      T a = A[h * n + i], b = B[h * m + j];
      T w = a * b * D, z = std::sqrt(w * (w + 2)), t = std::log1p(w + z);
      T gw = dphi * (z > 0 ? 2 * t / z : T(2));  // dphi/dw -> 2 as w -> 0
      // dw/dq = 2AB (q - k) + w A q [unclamped];  dw/dk = -2AB (q - k) + 2c w B k [unclamped]
      T cq = gw * w * a * ma[h * n + i], ck = gw * 2 * c * w * b * mb[h * m + j];
      for (int64_t e = 0; e < d; ++e) {
        T g = gw * 2 * a * b * (qi[e] - kj[e]);
        gq[e] += g + cq * qi[e];
        gk[e] += -g + ck * kj[e];
      }
    } else {
      T dm = 0, dp = 0;
      for (int64_t e = 0; e < d; ++e) {
        dm += (qi[e] - kj[e]) * (qi[e] - kj[e]);
        dp += (qi[e] + kj[e]) * (qi[e] + kj[e]);
      }
      T g = -2 * dphi * 2 * std::atan2(std::sqrt(dm), std::sqrt(dp));  // grad theta^2 = -2 theta P_x(y)/|P_x(y)|
      tangent_add(qi, kj, dm <= dp, g, gq);
      tangent_add(kj, qi, dm <= dp, g, gk);
    }
  }

  // out += g P_x(y) / |P_x(y)|, from y -/+ x (whichever is short: the direction stays accurate near +-x).
  void tangent_add(const T* x, const T* y, bool near, T g, T* out) const {
    T xu = 0, pp = 0;
    for (int64_t e = 0; e < d; ++e) xu += x[e] * (near ? y[e] - x[e] : y[e] + x[e]);
    for (int64_t e = 0; e < d; ++e) {
      T p = (near ? y[e] - x[e] : y[e] + x[e]) - xu * x[e];
      pp += p * p;
    }
    if (pp <= 0) return;
    T scale = g / std::sqrt(pp);
    for (int64_t e = 0; e < d; ++e) out[e] += scale * ((near ? y[e] - x[e] : y[e] + x[e]) - xu * x[e]);
  }

  // One tile row: x from the products p (len entries, keys j0...), then s = 1 / (phi + eps~) into s (may be
  // p) and, when f is given, phi'(x) into f and (ball) w into w_out. Adds sum_j s_j to *sum. Returns whether
  // any entry is a suspect (its s and f are then fixed by the caller).
  template <int G>
  bool row(int64_t h, int64_t i, int64_t j0, int64_t len, const T* p, T* s, T* f, T* w_out, T* sum) const {
    using Vec = at::vec::Vectorized<T>;
    constexpr int64_t W = Vec::size();
    const T* nkj = G == SPHERE ? nullptr : nk + h * m + j0;
    const T* Bj = G == POINCARE ? B + h * m + j0 : nullptr;
    const Vec veps(eps), vtwo(2), vone(1), vtau(tau), vbound(T(1) - tau);
    const Vec vnq(G == SPHERE ? T(1) : nq[h * n + i]), vA(G == POINCARE ? A[h * n + i] : T(0));
    Vec flags(0), vsum(0);
    auto body = [&](int64_t jj, int64_t cnt) {
      const Vec x = Vec::loadu(p + jj, cnt);
      Vec score, flag;
      if constexpr (G == SPHERE) {
        flag = x.abs() > vbound;
        const Vec theta = x.acos();
        score = vone / (theta * theta + veps);
        if (f) (Vec(-2) * theta * (vone - x * x).rsqrt()).store(f + jj, cnt);
      } else {
        const Vec nkv = Vec::loadu(nkj + jj, cnt);
        const Vec D = vnq + nkv - vtwo * x;
        flag = D <= vtau * (vnq + nkv);  // <=: q = k = 0 is a suspect too (w = 0 has no phi' formula)
        if constexpr (G == EUCLIDEAN) {
          score = vone / (D + veps);
        } else {
          const Vec w = vA * Vec::loadu(Bj + jj, cnt) * D;
          const Vec z = (w * (w + vtwo)).sqrt();
          const Vec t = (w + z).log1p();
          score = vone / (t * t + veps);
          if (f) (vtwo * t / z).store(f + jj, cnt);
          if (w_out) w.store(w_out + jj, cnt);
        }
      }
      score.store(s + jj, cnt);
      return std::make_pair(score, flag);
    };
    int64_t j = 0;
    for (; j + W <= len; j += W) {
      auto [score, flag] = body(j, W);
      vsum += score;
      flags = flags | flag;
    }
    T total = hsum(vsum);
    bool suspect = false;
    if (j < len) {  // the tail: lanes past len hold padding, so sum and test only the stored entries
      auto [score, flag] = body(j, len - j);
      T tmp[W];
      flag.store(tmp);
      for (int64_t e = 0; e < len - j; ++e) {
        total += s[j + e];
        suspect |= tmp[e] != 0;
      }
    }
    T tmp[W];
    flags.store(tmp);
    for (int64_t e = 0; e < W; ++e) suspect |= tmp[e] != 0;
    *sum += total;
    return suspect;
  }

  bool is_suspect(int64_t h, int64_t i, int64_t j, T x) const {
    if (geometry == SPHERE) return std::abs(x) > 1 - tau;
    T a = nq[h * n + i], b = nk[h * m + j];
    return a + b - 2 * x <= tau * (a + b);
  }
};

template <typename T>
Problem<T> problem(int geometry, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                   const at::Tensor& nq, const at::Tensor& nk, const at::Tensor& A, const at::Tensor& B,
                   const at::Tensor& ma, const at::Tensor& mb, double eps, double tau, double c, bool causal,
                   int64_t bq, int64_t bk) {
  Problem<T> p;
  p.geometry = geometry;
  p.BH = q.size(0), p.n = q.size(1), p.m = k.size(1), p.d = q.size(2), p.dv = v.size(2);
  p.bq = std::min<int64_t>(bq, p.n), p.bk = std::min<int64_t>(bk, p.m);
  p.causal = causal;
  p.eps = T(eps), p.tau = T(tau), p.c = T(c);
  p.q = q.data_ptr<T>(), p.k = k.data_ptr<T>(), p.v = v.data_ptr<T>();
  p.nq = geometry == SPHERE ? nullptr : nq.data_ptr<T>();
  p.nk = geometry == SPHERE ? nullptr : nk.data_ptr<T>();
  p.A = geometry == POINCARE ? A.data_ptr<T>() : nullptr;
  p.B = geometry == POINCARE ? B.data_ptr<T>() : nullptr;
  p.ma = geometry == POINCARE ? ma.data_ptr<T>() : nullptr;
  p.mb = geometry == POINCARE ? mb.data_ptr<T>() : nullptr;
  return p;
}

// Key blocks a query block [i0, i1) reaches: all of them, or (causal) up to key i1 - 1 + m - n.
template <typename T>
int64_t key_blocks(const Problem<T>& p, int64_t i1) {
  const int64_t nkb = (p.m + p.bk - 1) / p.bk;
  if (!p.causal) return nkb;
  const int64_t last = i1 - 1 + (p.m - p.n);
  return last < 0 ? 0 : std::min(nkb, last / p.bk + 1);
}

template <typename T, int G>
void forward_impl(const Problem<T>& p, T* o, T* row_sum) {
  const int64_t nqb = (p.n + p.bq - 1) / p.bq;
  at::parallel_for(0, p.BH * nqb, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> tile(p.bq * p.bk), acc(p.bq * p.dv), rs(p.bq);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t h = task / nqb, i0 = (task % nqb) * p.bq, i1 = std::min(p.n, i0 + p.bq), rows = i1 - i0;
      std::fill(acc.begin(), acc.end(), T(0));
      std::fill(rs.begin(), rs.end(), T(0));
      const T* Q = p.q + (h * p.n + i0) * p.d;
      for (int64_t jb = 0, nkb = key_blocks(p, i1); jb < nkb; ++jb) {
        const int64_t j0 = jb * p.bk, cols = std::min(p.m, j0 + p.bk) - j0;
        const T* K = p.k + (h * p.m + j0) * p.d;
        T* P = tile.data();
        gemm(false, true, rows, cols, p.d, T(1), Q, p.d, K, p.d, T(0), P, cols);  // q . k
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = i0 + r, len = p.visible(i, j0, cols);
          T* Pr = P + r * cols;
          const T before = rs[r];
          if (len > 0 && p.template row<G>(h, i, j0, len, Pr, Pr, nullptr, nullptr, &rs[r])) {
            // p was overwritten by s: the flagged entries' q . k again, one dot each; their matmul-form
            // score may be NaN (a cancelled distance below 0 on the ball), so the row is summed again
            const T* qi = p.q + (h * p.n + i) * p.d;
            T sum = 0;
            for (int64_t jj = 0; jj < len; ++jj) {
              const T* kj = p.k + (h * p.m + j0 + jj) * p.d;
              T x = 0;
              for (int64_t e = 0; e < p.d; ++e) x += qi[e] * kj[e];
              if (p.is_suspect(h, i, j0 + jj, x)) Pr[jj] = T(1) / (p.exact_phi(h, i, j0 + jj) + p.eps);
              sum += Pr[jj];
            }
            rs[r] = before + sum;
          }
          std::fill(Pr + std::max<int64_t>(len, 0), Pr + cols, T(0));
        }
        const T* V = p.v + (h * p.m + j0) * p.dv;
        gemm(false, false, rows, p.dv, cols, T(1), P, cols, V, p.dv, T(1), acc.data(), p.dv);  // s v
      }
      for (int64_t r = 0; r < rows; ++r) {
        const T inv = rs[r] > 0 ? T(1) / rs[r] : T(0);  // a query that sees no key gets output 0
        T* out = o + (h * p.n + i0 + r) * p.dv;
        for (int64_t e = 0; e < p.dv; ++e) out[e] = acc[r * p.dv + e] * inv;
        row_sum[h * p.n + i0 + r] = rs[r];
      }
    }
  });
}

// Outputs of the backward, as the Python side assembles them (see the module comment):
//   GQ (splits, BH, n, d) = sum_j Hq_ij k_j,  rq (splits, BH, n) = sum_j Hq_ij,  rw (splits, BH, n) = sum_j H_ij w_ij,
// and per key GK = sum_i Hk_ij q_i, ck, cw, dv; Hq = Hk = H except on the ball (Hq = H B_j, Hk = H A_i).
// The exact gradients of suspect pairs enter GQ and GK scaled so that the assembly turns them back.
template <typename T>
struct Grads {
  T *GQ, *rq, *rw, *GK, *ck, *cw, *dv;
};

// One tile row of the backward, in one pass: with x holding g_i . v_j and s the scores,
//   dL/dphi = -s^2 (x - Dg_i) / S_i,   s <- s / S_i (the weights, for dL/dv),   H = dL/dphi phi'(x),
// x <- Hk, y <- Hq (ball: Hq = H B_j, Hk = H A_i; else both H), column sums of Hk into ck (ball: of H w
// into cw, and their row sum into *rw). Returns the row sum of Hq.
template <typename T, int G>
T grad_row(T* __restrict x, T* __restrict s, const T* __restrict f, const T* __restrict w, T* __restrict y,
           const T* __restrict Bj, T a, T dg, T inv, T* __restrict ck, T* __restrict cw, int64_t len, T* rw) {
  using Vec = at::vec::Vectorized<T>;
  constexpr int64_t W = Vec::size();
  const Vec vdg(dg), vinv(inv), vzero(0), va(a);
  Vec vsq(0), vsw(0);
  T sq = 0, sw = 0;
  auto body = [&](int64_t j, int64_t cnt, bool full) {
    const Vec sv = Vec::loadu(s + j, cnt), weight = sv * vinv;
    Vec H = (vzero - weight * sv) * (Vec::loadu(x + j, cnt) - vdg);  // dL/dphi; s^2 alone overflows for tiny eps
    weight.store(s + j, cnt);
    if constexpr (G != EUCLIDEAN) H = H * Vec::loadu(f + j, cnt);
    Vec hq = H, hk = H;
    if constexpr (G == POINCARE) {
      const Vec hw = H * Vec::loadu(w + j, cnt);
      (Vec::loadu(cw + j, cnt) + hw).store(cw + j, cnt);
      hq = H * Vec::loadu(Bj + j, cnt);
      hk = H * va;
      hq.store(y + j, cnt);
      if (full) vsw += hw; else { T t[W]; hw.store(t); for (int64_t e = 0; e < cnt; ++e) sw += t[e]; }
    }
    hk.store(x + j, cnt);
    (Vec::loadu(ck + j, cnt) + hk).store(ck + j, cnt);
    if (full) vsq += hq; else { T t[W]; hq.store(t); for (int64_t e = 0; e < cnt; ++e) sq += t[e]; }
  };
  int64_t j = 0;
  for (; j + W <= len; j += W) body(j, W, true);
  if (j < len) body(j, len - j, false);
  if constexpr (G == POINCARE) *rw += sw + hsum(vsw);
  return sq + hsum(vsq);
}

template <typename T, int G>
void backward_impl(const Problem<T>& p, const T* g, const T* Dg, const T* row_sum, int64_t splits, Grads<T> out) {
  const int64_t nkb = (p.m + p.bk - 1) / p.bk, nqb = (p.n + p.bq - 1) / p.bq;
  const int64_t per_split = (nkb + splits - 1) / splits;
  constexpr bool ball = G == POINCARE;
  at::parallel_for(0, p.BH * splits, 1, [&](int64_t begin, int64_t end) {
    const int64_t bq = p.bq, bk = p.bk, d = p.d, dv = p.dv;
    // per-thread tiles: scores, phi', w (ball), q.k then g.v then dL/dphi then H, and Hq = H B (ball)
    std::vector<T> S(bq * bk), F(G == EUCLIDEAN ? 0 : bq * bk), Wt(ball ? bq * bk : 0), X(bq * bk);
    std::vector<T> Y(ball ? bq * bk : 0), inv(bq), gk(bk * d), dvb(bk * dv), ckb(bk), cwb(bk);
    std::vector<int64_t> sus;  // r * cols + jj of the tile's suspect pairs
    std::vector<T> dphi_sus, score_sus, eq(p.d), ekk(p.d);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t h = task / splits, split = task % splits;
      T* GQ = out.GQ + (split * p.BH + h) * p.n * d;
      T* rq = out.rq + (split * p.BH + h) * p.n;
      T* rw = out.rw + (split * p.BH + h) * p.n;
      for (int64_t jb = split * per_split; jb < std::min(nkb, (split + 1) * per_split); ++jb) {
        const int64_t j0 = jb * bk, cols = std::min(p.m, j0 + bk) - j0;
        const T* K = p.k + (h * p.m + j0) * d;
        const T* V = p.v + (h * p.m + j0) * dv;
        std::fill(gk.begin(), gk.end(), T(0));
        std::fill(dvb.begin(), dvb.end(), T(0));
        std::fill(ckb.begin(), ckb.end(), T(0));
        std::fill(cwb.begin(), cwb.end(), T(0));
        // causal: the first query block that sees key j0 holds query j0 - (m - n)
        const int64_t first = p.causal ? std::max<int64_t>(0, j0 - (p.m - p.n)) / bq : 0;
        for (int64_t ib = first; ib < nqb; ++ib) {
          const int64_t i0 = ib * bq, rows = std::min(p.n, i0 + bq) - i0;
          const T* Q = p.q + (h * p.n + i0) * d;
          const T* Gi = g + (h * p.n + i0) * dv;
          gemm(false, true, rows, cols, d, T(1), Q, d, K, d, T(0), X.data(), cols);  // q . k
          sus.clear();
          score_sus.clear();
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i0 + r, len = p.visible(i, j0, cols);
            T *Xr = X.data() + r * cols, *Sr = S.data() + r * cols;
            T* Fr = G == EUCLIDEAN ? nullptr : F.data() + r * cols;
            T unused = 0;
            if (len > 0 && p.template row<G>(h, i, j0, len, Xr, Sr, Fr, ball ? Wt.data() + r * cols : nullptr, &unused)) {
              for (int64_t jj = 0; jj < len; ++jj) {
                if (p.is_suspect(h, i, j0 + jj, Xr[jj])) {
                  Sr[jj] = T(1) / (p.exact_phi(h, i, j0 + jj) + p.eps);
                  sus.push_back(r * cols + jj);  // its gradient comes from the exact formula, not from H
                }
              }
            }
            const int64_t from = std::max<int64_t>(len, 0);
            std::fill(Sr + from, Sr + cols, T(0));
            if (Fr) std::fill(Fr + from, Fr + cols, T(0));
            inv[r] = row_sum[h * p.n + i] > 0 ? T(1) / row_sum[h * p.n + i] : T(0);
          }
          gemm(false, true, rows, cols, dv, T(1), Gi, dv, V, dv, T(0), X.data(), cols);  // g . v
          dphi_sus.clear();
          for (int64_t idx : sus) {  // suspects: dL/dphi for the exact formula, and out of H before any sum
            const int64_t r = idx / cols;
            dphi_sus.push_back(-(S[idx] * inv[r]) * S[idx] * (X[idx] - Dg[h * p.n + i0 + r]));
            score_sus.push_back(S[idx]);
            S[idx] = 0;  // H = 0 there (taking it out of the sums afterwards would cancel: it is the largest)
            if (G != EUCLIDEAN) F[idx] = 0;  // phi' of a cancelled x may be NaN
          }
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t o = r * cols;
            rq[i0 + r] += grad_row<T, G>(
                X.data() + o, S.data() + o, G == EUCLIDEAN ? nullptr : F.data() + o, ball ? Wt.data() + o : nullptr,
                ball ? Y.data() + o : nullptr, ball ? p.B + h * p.m + j0 : nullptr, ball ? p.A[h * p.n + i0 + r] : T(0),
                Dg[h * p.n + i0 + r], inv[r], ckb.data(), cwb.data(), cols, rw + i0 + r);
          }
          for (size_t e = 0; e < sus.size(); ++e) {
            const int64_t idx = sus[e], r = idx / cols, jj = idx % cols;
            S[idx] = score_sus[e] * inv[r];  // its weight, for dL/dv
            // into the sums the Python side scales: dq = a (rq q - GQ) + ... with a = 2 (2 A_i on the ball) and
            // dq^ = GQ on the sphere, so an exact gradient e enters GQ as -e / a (e on the sphere); k alike
            std::fill(eq.begin(), eq.end(), T(0));
            std::fill(ekk.begin(), ekk.end(), T(0));
            p.exact_grad(h, i0 + r, j0 + jj, dphi_sus[e], eq.data(), ekk.data());
            const T fq = G == SPHERE ? T(1) : G == EUCLIDEAN ? T(-0.5) : T(-0.5) / p.A[h * p.n + i0 + r];
            const T fk = G == SPHERE ? T(1) : G == EUCLIDEAN ? T(-0.5) : T(-0.5) / p.B[h * p.m + j0 + jj];
            for (int64_t c = 0; c < d; ++c) {
              GQ[(i0 + r) * d + c] += fq * eq[c];
              gk[jj * d + c] += fk * ekk[c];
            }
          }
          gemm(true, false, cols, dv, rows, T(1), S.data(), cols, Gi, dv, T(1), dvb.data(), dv);  // (s/S)^T g
          const T* Hq = ball ? Y.data() : X.data();
          gemm(false, false, rows, d, cols, T(1), Hq, cols, K, d, T(1), GQ + i0 * d, d);      // Hq k
          gemm(true, false, cols, d, rows, T(1), X.data(), cols, Q, d, T(1), gk.data(), d);  // Hk^T q
        }
        std::copy(gk.begin(), gk.begin() + cols * d, out.GK + (h * p.m + j0) * d);
        std::copy(dvb.begin(), dvb.begin() + cols * dv, out.dv + (h * p.m + j0) * dv);
        std::copy(ckb.begin(), ckb.begin() + cols, out.ck + h * p.m + j0);
        std::copy(cwb.begin(), cwb.begin() + cols, out.cw + h * p.m + j0);
      }
    }
  });
}

}  // namespace

// o (BH, n, dv) and the row sums S (BH, n)
std::vector<at::Tensor> ida_forward(int64_t geometry, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& nq, const at::Tensor& nk, const at::Tensor& A,
                                    const at::Tensor& B, const at::Tensor& ma, const at::Tensor& mb, double eps,
                                    double tau, double c, bool causal, int64_t bq, int64_t bk) {
  auto o = at::empty({q.size(0), q.size(1), v.size(2)}, q.options());
  auto row_sum = at::empty({q.size(0), q.size(1)}, q.options());
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "ida_forward", [&] {
    auto p = problem<scalar_t>(geometry, q, k, v, nq, nk, A, B, ma, mb, eps, tau, c, causal, bq, bk);
    auto run = [&](auto impl) { impl(p, o.data_ptr<scalar_t>(), row_sum.data_ptr<scalar_t>()); };
    if (geometry == EUCLIDEAN) run(forward_impl<scalar_t, EUCLIDEAN>);
    else if (geometry == POINCARE) run(forward_impl<scalar_t, POINCARE>);
    else run(forward_impl<scalar_t, SPHERE>);
  });
  return {o, row_sum};
}

// [GQ, rq, rw] summed over the key-block groups, then [GK, ck, cw, dv] (see Grads)
std::vector<at::Tensor> ida_backward(int64_t geometry, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                     const at::Tensor& nq, const at::Tensor& nk, const at::Tensor& A,
                                     const at::Tensor& B, const at::Tensor& ma, const at::Tensor& mb, double eps,
                                     double tau, double c, bool causal, int64_t bq, int64_t bk, const at::Tensor& g,
                                     const at::Tensor& Dg, const at::Tensor& row_sum, int64_t splits) {
  const int64_t BH = q.size(0), n = q.size(1), m = k.size(1), d = q.size(2);
  auto GQ = at::zeros({splits, BH, n, d}, q.options());
  auto rq = at::zeros({splits, BH, n}, q.options()), rw = at::zeros({splits, BH, n}, q.options());
  auto GK = at::empty({BH, m, d}, q.options()), dv = at::empty_like(v);
  auto ck = at::empty({BH, m}, q.options()), cw = at::empty({BH, m}, q.options());
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "ida_backward", [&] {
    auto p = problem<scalar_t>(geometry, q, k, v, nq, nk, A, B, ma, mb, eps, tau, c, causal, bq, bk);
    Grads<scalar_t> out{GQ.data_ptr<scalar_t>(), rq.data_ptr<scalar_t>(), rw.data_ptr<scalar_t>(),
                        GK.data_ptr<scalar_t>(), ck.data_ptr<scalar_t>(), cw.data_ptr<scalar_t>(),
                        dv.data_ptr<scalar_t>()};
    auto run = [&](auto impl) {
      impl(p, g.data_ptr<scalar_t>(), Dg.data_ptr<scalar_t>(), row_sum.data_ptr<scalar_t>(), splits, out);
    };
    if (geometry == EUCLIDEAN) run(backward_impl<scalar_t, EUCLIDEAN>);
    else if (geometry == POINCARE) run(backward_impl<scalar_t, POINCARE>);
    else run(backward_impl<scalar_t, SPHERE>);
  });
  if (splits > 1) return {GQ.sum(0), rq.sum(0), rw.sum(0), GK, ck, cw, dv};
  return {GQ[0], rq[0], rw[0], GK, ck, cw, dv};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &ida_forward, "inverse-distance attention, forward (CPU)");
  m.def("backward", &ida_backward, "inverse-distance attention, backward (CPU)");
}

// Gaussian mixture anomalies (see gaussian_mixture.h).
#include "analysis/online/gaussian_mixture.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"

namespace strata::online {
namespace {

constexpr double kRidge = 1e-3;  // added to covariance diagonals (standardized units): no singular fit
constexpr int kIterations = 50;
constexpr double kTolerance = 1e-6;
constexpr double kLog2Pi = 1.8378770664093453;

// Median and MAD per column; a constant column gets scale 1.
void Standardize(const Eigen::MatrixXd& x, Eigen::VectorXd* center, Eigen::VectorXd* scale) {
  const Eigen::Index d = x.cols();
  *center = Eigen::VectorXd::Zero(d);
  *scale = Eigen::VectorXd::Ones(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    std::vector<double> col(x.col(j).data(), x.col(j).data() + x.rows());
    const double m = Median(col);
    const double mad = Mad(col) / 0.6745;
    (*center)(j) = m;
    (*scale)(j) = mad > 1e-12 ? mad : 1.0;
  }
}

// log N(x | mean, cov) for every row, given cov's Cholesky factor.
Eigen::VectorXd LogDensity(const Eigen::MatrixXd& z, const Eigen::VectorXd& mean,
                           const Eigen::LLT<Eigen::MatrixXd>& llt) {
  const Eigen::Index d = z.cols();
  const Eigen::MatrixXd centered = (z.rowwise() - mean.transpose()).transpose();
  const Eigen::MatrixXd solved = llt.matrixL().solve(centered);
  const double log_det = 2.0 * llt.matrixL().toDenseMatrix().diagonal().array().log().sum();
  return (-0.5 * (solved.colwise().squaredNorm().array() + static_cast<double>(d) * kLog2Pi + log_det)).matrix();
}

// Quantile of the standard normal for probability p in (0.5, 1) (Abramowitz–Stegun 26.2.23, error < 4.5e-4).
double NormalQuantile(double p) {
  const double t = std::sqrt(-2.0 * std::log(1.0 - p));
  return t -
         (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

// Quantile of the chi-square distribution with d degrees of freedom (Wilson–Hilferty).
double ChiSquareQuantile(double d, double p) {
  const double a = 2.0 / (9.0 * d);
  const double c = 1.0 - a + NormalQuantile(p) * std::sqrt(a);
  return d * c * c * c;
}

// Row-wise log-sum-exp of a n × k matrix.
Eigen::VectorXd LogSumExp(const Eigen::MatrixXd& a) {
  const Eigen::VectorXd m = a.rowwise().maxCoeff();
  return m.array() + (a.colwise() - m).array().exp().rowwise().sum().log();
}

MixtureFit Fit(const Eigen::MatrixXd& z, int k, uint32_t seed, Eigen::MatrixXd* log_resp) {
  const Eigen::Index n = z.rows(), d = z.cols();
  MixtureFit f;
  f.k = k;
  // Seeding: the first mean at a random row, each next at the row farthest from the chosen ones.
  std::mt19937 rng(seed);
  std::vector<Eigen::Index> chosen = {static_cast<Eigen::Index>(rng() % static_cast<uint32_t>(n))};
  while (static_cast<int>(chosen.size()) < k) {
    Eigen::VectorXd nearest = Eigen::VectorXd::Constant(n, std::numeric_limits<double>::infinity());
    for (Eigen::Index c : chosen) nearest = nearest.cwiseMin((z.rowwise() - z.row(c)).rowwise().squaredNorm());
    Eigen::Index far = 0;
    nearest.maxCoeff(&far);
    chosen.push_back(far);
  }
  const Eigen::MatrixXd ridge = kRidge * Eigen::MatrixXd::Identity(d, d);
  Eigen::MatrixXd cov0 = ridge;
  if (n > 1) {
    const Eigen::MatrixXd c = z.rowwise() - z.colwise().mean();
    cov0 += c.transpose() * c / static_cast<double>(n - 1);
  }
  for (Eigen::Index c : chosen) {
    f.means.push_back(z.row(c).transpose());
    f.covariances.push_back(cov0);
    f.weights.push_back(1.0 / k);
  }
  double last = -std::numeric_limits<double>::infinity(), total = last;
  Eigen::MatrixXd lr(n, k);
  for (int it = 0; it < kIterations; ++it) {
    for (int c = 0; c < k; ++c)
      lr.col(c) = LogDensity(z, f.means[c], f.covariances[c].llt()).array() + std::log(f.weights[c]);
    const Eigen::VectorXd norm = LogSumExp(lr);
    total = norm.sum();
    lr.colwise() -= norm;
    const Eigen::MatrixXd resp = lr.array().exp();
    for (int c = 0; c < k; ++c) {
      const double nk = std::max(resp.col(c).sum(), 1e-9);
      f.weights[c] = nk / static_cast<double>(n);
      f.means[c] = (z.transpose() * resp.col(c)) / nk;
      const Eigen::MatrixXd centered = z.rowwise() - f.means[c].transpose();
      f.covariances[c] = (centered.transpose() * resp.col(c).asDiagonal() * centered) / nk + ridge;
    }
    if (std::abs(total - last) <= kTolerance * std::abs(total)) break;
    last = total;
  }
  const double params = k * (d + d * (d + 1) / 2.0) + (k - 1);
  f.bic = -2.0 * total + params * std::log(static_cast<double>(n));
  *log_resp = lr;
  return f;
}

}  // namespace

MixtureAnomalies FindMixtureAnomalies(const Eigen::MatrixXd& x, int max_k, uint32_t seed) {
  MixtureAnomalies out;
  const Eigen::Index n = x.rows();
  out.score.assign(static_cast<size_t>(n), std::numeric_limits<double>::quiet_NaN());
  out.component.assign(static_cast<size_t>(n), -1);
  std::vector<Eigen::Index> rows;
  for (Eigen::Index i = 0; i < n; ++i)
    if (x.row(i).allFinite()) rows.push_back(i);
  out.left_out = static_cast<size_t>(n) - rows.size();
  if (rows.size() < 3) return out;
  Eigen::MatrixXd kept(static_cast<Eigen::Index>(rows.size()), x.cols());
  for (size_t i = 0; i < rows.size(); ++i) kept.row(static_cast<Eigen::Index>(i)) = x.row(rows[i]);
  Standardize(kept, &out.fit.center, &out.fit.scale);
  const Eigen::MatrixXd z =
      (kept.rowwise() - out.fit.center.transpose()).array().rowwise() / out.fit.scale.transpose().array();
  Eigen::MatrixXd best_resp;
  for (int k = 1; k <= std::max(1, max_k) && k <= static_cast<int>(rows.size()) / 2; ++k) {
    Eigen::MatrixXd resp;
    MixtureFit f = Fit(z, k, seed, &resp);
    if (out.fit.k == 0 || f.bic < out.fit.bic) {
      f.center = out.fit.center;
      f.scale = out.fit.scale;
      out.fit = std::move(f);
      best_resp = resp;
    }
  }
  // Score: −log-likelihood under the chosen mixture.
  Eigen::MatrixXd lp(z.rows(), out.fit.k);
  for (int c = 0; c < out.fit.k; ++c)
    lp.col(c) = LogDensity(z, out.fit.means[c], out.fit.covariances[c].llt()).array() + std::log(out.fit.weights[c]);
  const Eigen::VectorXd ll = LogSumExp(lp);
  std::vector<double> scores;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    out.score[static_cast<size_t>(rows[i])] = -ll(row);
    scores.push_back(-ll(row));
    Eigen::Index c = 0;
    best_resp.row(row).maxCoeff(&c);
    out.component[static_cast<size_t>(rows[i])] = static_cast<int>(c);
  }
  // Anomalous: beyond the chi-square quantile from every component.
  const double limit = ChiSquareQuantile(static_cast<double>(z.cols()), 1.0 - diagnosis::thresholds::kGmmOutlierP);
  Eigen::VectorXd nearest = Eigen::VectorXd::Constant(z.rows(), std::numeric_limits<double>::infinity());
  for (int c = 0; c < out.fit.k; ++c) {
    // A component of a few points is a cluster of anomalies, not normal behaviour.
    if (out.fit.weights[c] < diagnosis::thresholds::kGmmMinNormalWeight) continue;
    const auto llt = out.fit.covariances[c].llt();
    const Eigen::MatrixXd centered = (z.rowwise() - out.fit.means[c].transpose()).transpose();
    nearest = nearest.cwiseMin(llt.matrixL().solve(centered).colwise().squaredNorm().transpose());
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (nearest(static_cast<Eigen::Index>(i)) > limit) out.anomalous.push_back(static_cast<size_t>(rows[i]));
  std::sort(out.anomalous.begin(), out.anomalous.end(),
            [&](size_t a, size_t b) { return out.score[a] > out.score[b]; });
  return out;
}

}  // namespace strata::online

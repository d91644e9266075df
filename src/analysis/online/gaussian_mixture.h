// GaussianMixture: eACGM's anomaly model over per-(rank, step) feature vectors (the step summary's fields):
// features are standardized by their median and MAD, a mixture of K full-covariance Gaussians is fitted by
// EM (k-means++-style seeding from a fixed seed, covariance regularized by kRidge), K from 1..max_k by BIC,
// and each point's negative log-likelihood is its anomaly score. A point is anomalous when its squared
// Mahalanobis distance to every component of at least 5 % weight (smaller ones are clusters of anomalies)
// exceeds the chi-square quantile of 1 − kGmmOutlierP (d degrees
// of freedom; Wilson–Hilferty's approximation); anomalous points are grouped by the component that explains them best
// (the clusters eACGM reports). Linear algebra by Eigen.
// Invariants: deterministic for a given input and seed; O(n · K · d²) per EM iteration; points with
// non-finite features are left out and counted.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Dense>

namespace strata::online {

struct MixtureFit {
  int k = 0;
  std::vector<double> weights;
  std::vector<Eigen::VectorXd> means;        // standardized space
  std::vector<Eigen::MatrixXd> covariances;  // standardized space
  Eigen::VectorXd center, scale;             // standardization: (x − center) / scale
  double bic = 0;
};

struct MixtureAnomalies {
  MixtureFit fit;
  std::vector<double> score;      // per input row: −log-likelihood (NaN for left-out rows)
  std::vector<size_t> anomalous;  // row indices, highest score first
  std::vector<int> component;     // per input row: most likely component (-1 when left out)
  size_t left_out = 0;            // rows with a non-finite feature
};

/// Fits the mixture to the rows of `x` (n × d) and scores them.
MixtureAnomalies FindMixtureAnomalies(const Eigen::MatrixXd& x, int max_k = 3, uint32_t seed = 1);

}  // namespace strata::online

// Gaussian mixture anomalies (analysis/online/gaussian_mixture.h): two regimes of normal points (e.g. two
// kinds of steps) are both normal; points far from both are anomalous; non-finite rows are left out.
#include "analysis/online/gaussian_mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace strata::online {
namespace {

TEST(GaussianMixture, TwoRegimesAreNormalAndFarPointsAnomalous) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  const int n = 400;
  Eigen::MatrixXd x(n + 3, 3);
  for (int i = 0; i < n; ++i) {
    const bool second = i % 2;  // two regimes: (1, 0.5, 0.1) and (2, 0.2, 0.1)
    x.row(i) << (second ? 2.0 : 1.0) + noise(rng), (second ? 0.2 : 0.5) + noise(rng), 0.1 + noise(rng);
  }
  x.row(n) << 1.5, 0.35, 0.1;     // between the regimes: on no regime
  x.row(n + 1) << 1.0, 0.5, 0.9;  // regime 1 except a large third feature (e.g. GC)
  x.row(n + 2) << 2.0, std::nan(""), 0.1;
  const MixtureAnomalies a = FindMixtureAnomalies(x);
  EXPECT_GE(a.fit.k, 2);
  EXPECT_EQ(a.left_out, 1u);
  ASSERT_GE(a.anomalous.size(), 2u);
  ASSERT_LE(a.anomalous.size(), 6u);  // the two planted points and at most a few tail points
  EXPECT_TRUE(std::find(a.anomalous.begin(), a.anomalous.end(), size_t(n)) != a.anomalous.end());
  EXPECT_TRUE(std::find(a.anomalous.begin(), a.anomalous.end(), size_t(n + 1)) != a.anomalous.end());
  EXPECT_TRUE(std::isnan(a.score[n + 2]));
  EXPECT_EQ(a.component[n + 2], -1);
}

TEST(GaussianMixture, DeterministicForTheSameSeed) {
  std::mt19937 rng(8);
  std::normal_distribution<double> noise(0, 1);
  Eigen::MatrixXd x(100, 2);
  for (int i = 0; i < 100; ++i) x.row(i) << noise(rng), noise(rng);
  const auto a = FindMixtureAnomalies(x, 3, 5), b = FindMixtureAnomalies(x, 3, 5);
  EXPECT_EQ(a.fit.k, b.fit.k);
  EXPECT_EQ(a.anomalous, b.anomalous);
  EXPECT_DOUBLE_EQ(a.score[17], b.score[17]);
}

TEST(GaussianMixture, TooFewRowsScoreNothing) {
  Eigen::MatrixXd x(2, 2);
  x << 1, 2, 3, 4;
  const auto a = FindMixtureAnomalies(x);
  EXPECT_TRUE(a.anomalous.empty());
  EXPECT_EQ(a.fit.k, 0);
}

}  // namespace
}  // namespace strata::online

// Which costs a calibration's rows can identify (docs/calibration.md, "How
// calibrate fits"): each candidate cost's elasticity on each fit row,
// d ln predicted / d ln cost, from one run with the cost 20% up (down when
// that leaves its hard range), then a rank-revealing selection of the
// columns of that matrix.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vsim::app {

// A cost that moves no row: every |elasticity| below this (a 20% change
// moves no row by 1%).
inline constexpr double kElasticityFloor = 0.05;
// A cost whose column keeps less than this fraction of its length once the
// columns already chosen are projected out moves the rows only together with
// them (its direction is 99% theirs: cos > 0.99).
inline constexpr double kCollinearResidual = 0.14;
// The perturbation of a cost for its elasticity: ln(1.2).
inline constexpr double kPerturbation = 1.2;
// The sensitivity runs divide every transfer by this (never below one
// message): elasticities of steady-state rates need no full-length runs, and
// the analysis costs a quarter of as many full evaluations.
inline constexpr unsigned kSensitivityShrink = 4;

struct Identification {
  std::vector<std::size_t> chosen;                      // columns, in the order chosen (largest first)
  std::vector<std::pair<std::size_t, std::string>> out; // column -> why it is left alone
};

// Greedy Gram-Schmidt with column pivoting (QR with column pivoting) on the
// elasticity matrix e[row][column]: columns whose every entry is below
// kElasticityFloor are out ("no row moves it"); then repeatedly the column
// with the longest residual (its part orthogonal to those chosen) is chosen,
// unless that residual is under kCollinearResidual of its own length (then
// it and every column left are out, each named with the chosen cost its
// column is closest to), and at most `max_chosen` are chosen. Ties go to
// the earlier column, so the choice is deterministic. `names` names the
// columns in the reasons.
Identification identify(const std::vector<std::vector<double>>& e, const std::vector<std::string>& names,
                        std::size_t max_chosen);

} // namespace vsim::app

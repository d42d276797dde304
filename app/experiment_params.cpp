// placeholder: replaced by the experiment-level declarations
#include "app/registry.hpp"
namespace vsim::app { void declare_experiment_params(ParamRegistry&) {} }

// Boost.JSON's implementation, compiled once for the adapter tests (the layer uses its headers only, as plugins do).
#include <boost/json/src.hpp>

// The error type of every bad input the tool reports: a missing or corrupt file, a frame of the
// wrong geometry, a subregion outside the frame, an unwritable output. what() is the whole
// message, starting with the file it is about; main prints it on one line and exits nonzero.
#pragma once

#include <stdexcept>

namespace registration {

class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace registration

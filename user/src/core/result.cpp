// Constructors for Error values.
#include "xoffload/result.hpp"

#include <cstring>

namespace xoffload {

Error usage_error(std::string msg)
{
	return Error{ErrorKind::usage, EINVAL, std::move(msg)};
}

Error runtime_error(std::string msg, int err)
{
	return Error{ErrorKind::runtime, err < 0 ? -err : err, std::move(msg)};
}

Error errno_error(std::string msg, int err)
{
	if (err < 0)
		err = -err;
	msg += ": ";
	msg += std::strerror(err);
	return Error{ErrorKind::runtime, err, std::move(msg)};
}

} // namespace xoffload

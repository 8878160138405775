// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Socket constants of AF_XDP and busy polling that older libc headers lack
// (glibc 2.36 has AF_XDP and SOL_XDP; SO_PREFER_BUSY_POLL and
// SO_BUSY_POLL_BUDGET are Linux 5.11's). Private to the xsk module.
#pragma once

#include <sys/socket.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

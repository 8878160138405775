/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Everything xdp_geneve (RFC 8926) is made of, one header per concern:
 * geneve_maps.h (maps, counters, the per-CPU lookup cache), geneve_parse.h
 * (outer headers, Geneve header and options, inner flow hash),
 * geneve_decap.h (decapsulation) and csum.h (the outer UDP checksum).
 */
#ifndef XOFFLOAD_GENEVE_H
#define XOFFLOAD_GENEVE_H

#include "geneve_maps.h"
#include "geneve_parse.h"
#include "geneve_decap.h"
#include "csum.h"

#endif /* XOFFLOAD_GENEVE_H */

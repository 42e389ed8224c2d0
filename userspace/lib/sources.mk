# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# libdlcp's sources, for its Makefile and the test programs (which compile
# them in, with the sanitizers), relative to userspace/lib.

LIBDLCP_SRCS	:= ep.c transport_dlcp.c transport_tcp.c addr.c helpers.c \
		   group.c rendezvous.c frame.c frame_quant.c coll.c \
		   allreduce_ring.c allreduce_direct.c ps.c barrier.c quant.c \
		   qcoll.c part.c reduce.c gather.c scatter.c alltoall.c
LIBDLCP_HDRS	:= libdlcp.h addr.h clock.h io.h transport.h group.h frame.h \
		   coll.h qcoll.h

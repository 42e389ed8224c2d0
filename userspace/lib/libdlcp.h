/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp: userspace shim over DLCP sockets (and, for comparisons, TCP).
 *
 * Three layers:
 *
 *   1. Endpoints: one socket bound to an address, sending and receiving
 *      whole tensors (one message each) with their metadata and, on
 *      receive, the exact byte ranges the network lost (zero-filled).
 *   2. Pure helpers: per-segment magnitude classes, loss-aware averaging
 *      (accumulate with lost ranges, finalize), address/group parsing.
 *   3. Collectives over a group of ranks: ring all-reduce (split into
 *      reduce-scatter and all-gather, each callable on its own) and a
 *      parameter server (push/pull), all loss-aware.
 *
 * Conventions: functions return 0 (or a non-negative count) on success and
 * a negative errno on failure; nothing prints. Thread safety: an endpoint or
 * a group is used by one thread at a time.
 *
 * Loss handling (collectives): every contribution that reaches a rank is
 * counted per element, using the lost ranges the transport reports; the
 * result of DLCP_REDUCE_MEAN is, per element, the average over the
 * contributions that actually arrived (unbiased). DLCP_REDUCE_MEAN_ZEROFILL
 * divides by the world size instead (lost contributions count as zero).
 * DLCP_REDUCE_SUM returns the sum scaled by N / arrived (unbiased estimate
 * of the full sum). An element of the *result* that is lost on its way back
 * (all-gather or pull) keeps the caller's previous value in the buffer.
 *
 * Wire metadata of collectives is carried in a small header at the start of
 * each message, marked critical (it always arrives); it lets every rank
 * detect a peer whose tensor size (-EMSGSIZE) or dtype/op (-EINVAL)
 * differs. A rank that stops answering gives -ETIMEDOUT within the group
 * timeout. Headers are in host byte order: all ranks must share it.
 */
#ifndef LIBDLCP_H
#define LIBDLCP_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/dlcp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBDLCP_VERSION		"0.1.0"

/* Transports: DLCP (needs the dlcp module) or TCP (same semantics, exact). */
enum dlcp_transport {
	DLCP_TRANSPORT_DLCP = 0,
	DLCP_TRANSPORT_TCP = 1,
};

/* Element size of @dtype in bytes (1 for DLCP_DTYPE_BYTES), 0 if unknown. */
size_t dlcp_dtype_size(int dtype);

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

struct dlcp_ep;

/*
 * Open an endpoint bound to @addr (port 0: any). @transport is an enum
 * dlcp_transport. -EAFNOSUPPORT/-ESOCKTNOSUPPORT/-EPROTONOSUPPORT when the
 * module is not loaded.
 */
int dlcp_ep_open(struct dlcp_ep **ep, const struct sockaddr_in *addr,
		 int transport);
/*
 * Close: waits for unfinished outgoing messages at most @linger_ms (<0:
 * the transport's own rule, i.e. DLCP waits until delivered or failed).
 */
int dlcp_ep_close(struct dlcp_ep *ep, int linger_ms);
/* The socket (DLCP) or listening socket (TCP) of @ep, for poll(). */
int dlcp_ep_fd(const struct dlcp_ep *ep);
/* Bound address of @ep (-EAFNOSUPPORT for an IPv6 endpoint). */
int dlcp_ep_addr(const struct dlcp_ep *ep, struct sockaddr_in *addr);
/*
 * The same for either family: an endpoint bound to an AF_INET or AF_INET6
 * address (@addrlen at least that family's sockaddr size; port 0: any, the
 * bound one is read back with dlcp_ep_addr_sa()).
 */
int dlcp_ep_open_sa(struct dlcp_ep **ep, const struct sockaddr *addr,
		    socklen_t addrlen, int transport);
int dlcp_ep_addr_sa(const struct dlcp_ep *ep, struct sockaddr_storage *addr);
/* Largest time a blocking send may wait for buffer space (ms, 0: forever). */
int dlcp_ep_set_send_timeout(struct dlcp_ep *ep, int timeout_ms);
/* DLCP_SEGMENT_SIZE of @ep (TCP: the DLCP default for a 1500 MTU). */
int dlcp_ep_segment_size(const struct dlcp_ep *ep);

/**
 * struct dlcp_tensor_meta - what to send with a tensor
 * @tensor_id, @iteration:	the application's key (opaque to DLCP)
 * @layer:			layer (selects the priority class)
 * @dtype:			enum dlcp_dtype of the payload
 * @flags:			DLCP_MSG_CRITICAL and/or DLCP_MSG_HAS_DEADLINE;
 *				the library adds HAS_BUDGET and HAS_LAYER
 * @loss_budget_ppm:		loss budget (0: exact)
 * @deadline_ms:		with DLCP_MSG_HAS_DEADLINE
 * @crit, @nr_crit:		byte ranges that must arrive
 * @seg_class, @nr_seg_class:	per-segment classes (dlcp_seg_classes());
 *				dropped silently if the module does not
 *				support DLCP_CMSG_SEG_CLASS yet
 */
struct dlcp_tensor_meta {
	uint32_t tensor_id;
	uint32_t iteration;
	uint16_t layer;
	uint8_t dtype;
	uint16_t flags;
	uint32_t loss_budget_ppm;
	uint32_t deadline_ms;
	const struct dlcp_range *crit;
	uint32_t nr_crit;
	const uint8_t *seg_class;
	uint32_t nr_seg_class;
};

/**
 * struct dlcp_tensor_info - what came with a received tensor
 * @src:	sender's endpoint address
 * @status:	DLCP_RECV_EXACT or DLCP_RECV_LOSSY
 * @msg_len:	message length in bytes
 * @bytes_lost:	bytes zero-filled
 * @nr_lost:	number of lost ranges (all of them are returned)
 */
struct dlcp_tensor_info {
	struct sockaddr_in src;
	uint32_t tensor_id;
	uint32_t iteration;
	uint16_t layer;
	uint8_t dtype;
	uint8_t status;
	uint16_t flags;
	uint32_t msg_len;
	uint32_t bytes_lost;
	uint32_t nr_lost;
};

/*
 * Send @len bytes (one message) to @dst. 0, or -errno (-ETIMEDOUT: no
 * room; -ECONNREFUSED, over DLCP: a message this endpoint sent earlier
 * found no socket at its destination, whose process died or closed it).
 */
int dlcp_send_tensor(struct dlcp_ep *ep, const struct sockaddr_in *dst,
		     const void *buf, size_t len,
		     const struct dlcp_tensor_meta *meta);
/* Same, payload gathered from @iov[0..@iovcnt). */
struct iovec;
int dlcp_send_tensorv(struct dlcp_ep *ep, const struct sockaddr_in *dst,
		      const struct iovec *iov, int iovcnt,
		      const struct dlcp_tensor_meta *meta);

/* Same, to an AF_INET or AF_INET6 @dst of the endpoint's family. */
int dlcp_send_tensorv_sa(struct dlcp_ep *ep, const struct sockaddr *dst,
			 socklen_t dstlen, const struct iovec *iov, int iovcnt,
			 const struct dlcp_tensor_meta *meta);

/*
 * Receive one whole message, from any sender, waiting at most @timeout_ms
 * (<0: forever). *@buf is malloc()ed to the message length, *@lost (may be
 * NULL if not wanted) to info->nr_lost ranges (NULL when none); free both.
 * Returns the message length, -ETIMEDOUT, or -errno (-ECONNREFUSED as
 * for dlcp_send_tensor()). A sender that is not
 * IPv4 leaves info->src zero but for its family (dlcp_recv_tensor_sa()).
 */
long dlcp_recv_tensor(struct dlcp_ep *ep, void **buf,
		      struct dlcp_tensor_info *info, struct dlcp_range **lost,
		      int timeout_ms);
/* Same; the sender's address (either family) in *@src (may be NULL). */
long dlcp_recv_tensor_sa(struct dlcp_ep *ep, void **buf,
			 struct dlcp_tensor_info *info,
			 struct dlcp_range **lost, int timeout_ms,
			 struct sockaddr_storage *src);

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

/*
 * Per-segment magnitude classes. The buffer is cut into segments of
 * @seg_size bytes rounded down to whole elements (as the module does); a
 * segment's key is its largest |x|, compared as the bit pattern with the
 * sign cleared (valid ordering for FP32/FP16/BF16). The ceil(@top_fraction
 * * nsegs) segments with the largest keys get class 0 (important), the
 * others class 1 (may be dropped first). Ties keep the earlier segment.
 * Returns nsegs (entries written to @classes, which must hold them), or
 * -EINVAL (bad dtype, seg_size below one element, fraction outside [0,1]),
 * -ENOSPC if @nr_classes is too small.
 */
long dlcp_seg_classes(const void *buf, size_t len, int dtype,
		      size_t seg_size, double top_fraction,
		      uint8_t *classes, size_t nr_classes);

/*
 * Algorithms of dlcp_allreduce(), dlcp_reduce_scatter() and
 * dlcp_all_gather(). Both move the same bytes over every rank's link:
 * 2 (N - 1) / N of the tensor each way for an all-reduce.
 */
enum dlcp_algo {
	DLCP_ALGO_RING = 0,	/* N - 1 steps to the next rank each */
	DLCP_ALGO_DIRECT = 1,	/* one step: each chunk straight to its rank */
	__DLCP_ALGO_MAX
};

/* Reduction modes of the collectives. */
enum dlcp_reduce {
	DLCP_REDUCE_MEAN = 0,		/* mean over arrived contributions */
	DLCP_REDUCE_SUM = 1,		/* sum, scaled by N / arrived */
	DLCP_REDUCE_MEAN_ZEROFILL = 2,	/* sum of arrived / N */
	__DLCP_REDUCE_MAX
};

/*
 * acc[i] += in[i] and cnt[i] += (in_cnt ? in_cnt[i] : 1) for every element
 * i < @n of @in not touched by a lost range. @lost are byte ranges of the
 * message @in came in, whose element 0 sits at byte @data_off. dtype FP32 or
 * INT32. Returns the number of elements skipped as lost, or -EINVAL.
 */
long dlcp_reduce_accumulate(int dtype, void *acc, uint32_t *cnt,
			    const void *in, const uint32_t *in_cnt, size_t n,
			    const struct dlcp_range *lost, size_t nr_lost,
			    size_t data_off);
/*
 * Turn sums into the result of @mode for @world contributors: MEAN
 * acc/cnt, SUM acc*world/cnt, MEAN_ZEROFILL acc/world. Elements with
 * cnt 0 take @fallback[i] (or 0 when @fallback is NULL). Returns the
 * number of elements that took the fallback, or -EINVAL.
 */
long dlcp_reduce_finalize(int dtype, void *acc, const uint32_t *cnt, size_t n,
			  int mode, unsigned int world, const void *fallback);

/* Element range [*off, *off + *len) of chunk @i of @n elements in @world. */
void dlcp_chunk_range(size_t n, unsigned int world, unsigned int i,
		      size_t *off, size_t *len);

/* Parse "a.b.c.d:port". 0 or -EINVAL. */
int dlcp_parse_addr(const char *s, struct sockaddr_in *out);
/* Parse "a.b.c.d:port" or "[IPv6]:port". 0 or -EINVAL. */
int dlcp_parse_addr_sa(const char *s, struct sockaddr_storage *out);
/*
 * Parse a group file's text: one addr:port per line, rank order; blank
 * lines and '#' comments ignored. Returns the number of ranks (<= @max),
 * -EINVAL on a bad line, -E2BIG if more than @max.
 */
int dlcp_parse_group(const char *text, struct sockaddr_in *addrs, int max);
/* Same, IPv6 lines ("[addr]:port") too. */
int dlcp_parse_group_sa(const char *text, struct sockaddr_storage *addrs,
			int max);

/* ------------------------------------------------------------------ */
/* Groups and collectives                                              */
/* ------------------------------------------------------------------ */

struct dlcp_group;

/* Largest world size (ring steps are keyed in 12 bits: world - 1 <= 4095). */
#define DLCP_GROUP_MAX		4096

/*
 * Open rank @rank of a group of @world ranks at @addrs (rank r binds
 * addrs[r]). @timeout_ms bounds every wait of a collective: a rank that
 * stops answering, or whose connection fails, ends the collective with
 * -ETIMEDOUT (or the connection's error, e.g. -ECONNRESET, -EPIPE) within
 * it. 0: $DLCP_TIMEOUT seconds (fractions allowed), else 30000.
 */
int dlcp_group_open(struct dlcp_group **g, int rank, int world,
		    const struct sockaddr_in *addrs, int transport,
		    int timeout_ms);
/* Same, addresses of either family (all ranks of one family). */
int dlcp_group_open_sa(struct dlcp_group **g, int rank, int world,
		       const struct sockaddr_storage *addrs, int transport,
		       int timeout_ms);
/*
 * Same on an endpoint already open (e.g. bound to port 0, its address
 * published to the other ranks before they are known): the group owns @ep
 * from then on (dlcp_group_close() closes it; on failure it stays the
 * caller's). addrs[@rank] is replaced by @ep's bound address.
 */
int dlcp_group_open_ep(struct dlcp_group **g, struct dlcp_ep *ep, int rank,
		       int world, const struct sockaddr_storage *addrs,
		       int timeout_ms);
/* Same, addresses from a group file (see dlcp_parse_group_sa()). */
int dlcp_group_open_file(struct dlcp_group **g, const char *path, int rank,
			 int transport, int timeout_ms);
/*
 * Same, from the environment: RANK and WORLD_SIZE (as torchrun sets them);
 * DLCP_GROUP_FILE if set; else, only when asked for, a fixed address plan:
 * 127.0.0.1:(@base_port + r) with DLCP_SAME_HOST=1, or
 * 10.77.0.(r+1):@base_port with DLCP_ADDR_PLAN=10.77 (the old demo's, at
 * most 254 ranks); otherwise -EDESTADDRREQ (ranks on several hosts find
 * each other through a rendezvous: dlcp.Group.from_env() in Python).
 * @base_port 0 reads DLCP_BASE_PORT (default 29600). DLCP_TRANSPORT=tcp
 * selects TCP when @transport is < 0.
 */
int dlcp_group_open_env(struct dlcp_group **g, int base_port, int transport,
			int timeout_ms);
/* Close; waits at most @linger_ms for unfinished sends (<0: default). */
int dlcp_group_close(struct dlcp_group *g, int linger_ms);
int dlcp_group_rank(const struct dlcp_group *g);
int dlcp_group_world(const struct dlcp_group *g);
struct dlcp_ep *dlcp_group_ep(struct dlcp_group *g);
/* Address of rank @r (this rank's: where its endpoint is bound). */
int dlcp_group_addr(const struct dlcp_group *g, int r,
		    struct sockaddr_storage *addr);

/* What a collective saw (optional output). */
struct dlcp_coll_stats {
	uint64_t msgs_sent;
	uint64_t msgs_recv;
	uint64_t bytes_sent;
	uint64_t bytes_lost;		/* zero-filled bytes received */
	uint64_t elems_lost;		/* contributions lost (elements) */
	uint64_t elems_fallback;	/* result elements that kept the
					 * caller's previous value */
};

/**
 * struct dlcp_coll_opts - options of one collective call
 * @tag:	the caller's tensor id (e.g. bucket index), low 16 bits used
 * @iteration:	the caller's iteration; with @tag it keys the messages, so
 *		collectives in flight at once must differ in one of them
 * @layer:	DLCP layer (priority) of the messages
 * @budget_ppm:	loss budget of reduce-scatter / push messages
 * @budget2_ppm: loss budget of all-gather / pull messages
 * @reduce:	enum dlcp_reduce
 * @server:	parameter server rank (PS only)
 * @dedicated_server: the server contributes no data (PS only)
 * @timeout_ms:	0: the group's
 * @stats:	if not NULL, filled in (zeroed first)
 * @algo:	enum dlcp_algo (all-reduce, reduce-scatter, all-gather); all
 *		ranks must use the same
 */
struct dlcp_coll_opts {
	uint32_t tag;
	uint32_t iteration;
	uint16_t layer;
	uint32_t budget_ppm;
	uint32_t budget2_ppm;
	int reduce;
	int server;
	int dedicated_server;
	int timeout_ms;
	struct dlcp_coll_stats *stats;
	int algo;
};

/*
 * Ring all-reduce of @n elements of @dtype (FP32 or INT32) in @buf, in
 * place: reduce-scatter then all-gather. Elements of the result lost in
 * the all-gather keep the caller's own contribution (scaled by N for SUM).
 */
int dlcp_allreduce(struct dlcp_group *g, void *buf, size_t n, int dtype,
		   const struct dlcp_coll_opts *opts);
/*
 * Ring reduce-scatter: afterwards chunk dlcp_group_rank() of @buf (see
 * dlcp_chunk_range()) holds the reduced result; other chunks are left as
 * they were (this rank's own contribution).
 */
int dlcp_reduce_scatter(struct dlcp_group *g, void *buf, size_t n, int dtype,
			const struct dlcp_coll_opts *opts);
/*
 * Ring all-gather: rank r contributes chunk r of @buf; afterwards every
 * chunk holds its owner's values, except elements lost on the way, which
 * keep @buf's previous contents.
 */
int dlcp_all_gather(struct dlcp_group *g, void *buf, size_t n, int dtype,
		    const struct dlcp_coll_opts *opts);
/*
 * Parameter server: every contributing rank pushes @send (budget_ppm) to
 * opts->server, which reduces and sends the result back (budget2_ppm) into
 * @recv; elements lost in the pull keep @recv's previous contents. @send
 * and @recv may be the same buffer. A dedicated server passes @send NULL.
 */
int dlcp_ps_push_pull(struct dlcp_group *g, const void *send, void *recv,
		      size_t n, int dtype, const struct dlcp_coll_opts *opts);
/*
 * Reduce to @root: the reduce-scatter of dlcp_allreduce() (opts->algo,
 * budget_ppm), then every rank's reduced chunk straight to @root
 * (budget2_ppm). Afterwards @root's @buf holds the result, with the same
 * loss handling as dlcp_allreduce(); the other ranks' @buf is left as it
 * was. -EINVAL for a @root outside the group.
 */
int dlcp_reduce(struct dlcp_group *g, void *buf, size_t n, int dtype,
		int root, const struct dlcp_coll_opts *opts);
/*
 * The collectives that move elements without reducing them take any
 * @dtype (only its size matters; all ranks must pass the same, -EINVAL)
 * and are exact: opts->budget_ppm applies to their messages only when the
 * caller sets it (budget2_ppm and reduce are not used), and an element
 * lost keeps the receiving buffer's previous value (stats'
 * elems_fallback). Large parts travel in several messages. A part of
 * another length than its receiver expects gives -EMSGSIZE there, and the
 * receiver tells the ranks still in the collective, which fail with it.
 *
 * Gather to @root: rank r's @n elements at @send land at element r * @n
 * of @root's @recv (world * @n elements; NULL on the other ranks).
 */
int dlcp_gather(struct dlcp_group *g, const void *send, void *recv, size_t n,
		int dtype, int root, const struct dlcp_coll_opts *opts);
/*
 * Scatter from @root: elements [r * @n, (r + 1) * @n) of @root's @send
 * (NULL on the other ranks) land in rank r's @recv (@n elements).
 */
int dlcp_scatter(struct dlcp_group *g, const void *send, void *recv, size_t n,
		 int dtype, int root, const struct dlcp_coll_opts *opts);
/*
 * All-to-all with a part per pair of ranks: this rank sends @scounts[p]
 * elements from @send + @sdispls[p] (in elements) to rank p and receives
 * the @rcounts[p] elements rank p sends it at @recv + @rdispls[p];
 * @scounts[p] here must equal rank p's @rcounts[this rank] (-EMSGSIZE).
 * NULL displacements: the parts are packed in rank order. Zero-length
 * parts are allowed (the buffer may then be NULL). The parts follow a
 * shifted schedule (at step k to rank + k, from rank - k), so that no
 * receiver has every peer sending to it at once. @send and @recv must not
 * overlap.
 */
int dlcp_all_to_allv(struct dlcp_group *g, const void *send,
		     const size_t *scounts, const size_t *sdispls, void *recv,
		     const size_t *rcounts, const size_t *rdispls, int dtype,
		     const struct dlcp_coll_opts *opts);
/* The same with @n elements for every rank, packed in rank order. */
int dlcp_all_to_all(struct dlcp_group *g, const void *send, void *recv,
		    size_t n, int dtype, const struct dlcp_coll_opts *opts);
/* A simple barrier (one exact message around the ring, twice). */
int dlcp_barrier(struct dlcp_group *g, uint32_t iteration, int timeout_ms);

/* ------------------------------------------------------------------ */
/* Homomorphic quantization (quant.c) and quantized collectives         */
/* (qcoll.c)                                                           */
/* ------------------------------------------------------------------ */

/*
 * Levels L of a b-bit quantizer: 7 (b = 4), 127 (b = 8), 0 otherwise.
 * Quantized values are integers in [-L, L]; a sum of c of them lies in
 * [-cL, cL], which an int32 holds for any c <= DLCP_GROUP_MAX.
 */
int dlcp_quant_levels(int bits);
/* Seed of the rounding stream of @rank for (@tag, @iteration). */
uint64_t dlcp_quant_seed(uint32_t seed, int rank, uint32_t tag,
			 uint32_t iteration);
/*
 * Stochastic rounding to @L levels (1..127, e.g. dlcp_quant_levels(bits)):
 * q[i] = floor(y + u), y = x[i] * L / @scale clamped to [-L, L], u uniform
 * in [0, 1) from @seed. E[q[i]] = y (unbiased), |q[i] - y| < 1. 0 or
 * -EINVAL (L out of range, scale not > 0).
 */
int dlcp_quantize(const float *x, int32_t *q, size_t n, float scale, int L,
		  uint64_t seed);
/*
 * out[i] = sum[i] * scale / L, averaged per @mode (enum dlcp_reduce) over
 * cnt[i] contributions of @world; cnt 0 gives 0. Returns how many had
 * cnt 0, or -EINVAL.
 */
long dlcp_dequantize(const int32_t *sum, const uint32_t *cnt, float *out,
		     size_t n, float scale, int L, int mode,
		     unsigned int world);
/* Narrowest wire width (4, 8, 16 or 32 bits) holding every @v[i]. */
int dlcp_qwidth(const int32_t *v, size_t n);
/* Bytes of @n elements of @width bits (4: two per byte, low nibble first). */
size_t dlcp_qwire_bytes(size_t n, int width);
/* Pack / unpack two's complement integers of @width bits (host order). */
void dlcp_qpack(const int32_t *v, size_t n, int width, void *out);
void dlcp_qunpack(const void *in, size_t n, int width, int32_t *out);
/*
 * Randomized block Hadamard rotation: random signs from @seed, then an
 * orthonormal Walsh-Hadamard transform per block (power-of-two blocks of up
 * to 16384 elements; a tail under 16 elements is zero-padded). @x holds
 * dlcp_hadamard_len(@n) elements (zeros past @n before a forward call).
 * @inverse undoes it.
 */
size_t dlcp_hadamard_len(size_t n);
int dlcp_hadamard(float *x, size_t n, uint64_t seed, int inverse);

/**
 * struct dlcp_quant_opts - homomorphic compression of a collective
 * @bits:	4 or 8
 * @hadamard:	rotate (randomized Hadamard) before quantizing
 * @seed:	rotation seed; every rank must pass the same (checked), it is
 *		mixed with the collective's tag and iteration
 * @fit:	THC's trade: each rank quantizes to L / world levels (at least
 *		1), so that any sum of all contributions still fits @bits and
 *		every message is @bits wide; otherwise L levels and partial
 *		sums widen on the wire (8 bits: mostly 16-bit messages)
 */
struct dlcp_quant_opts {
	int bits;
	int hadamard;
	uint32_t seed;
	int fit;
};

/*
 * Quantized state of one tensor between a reduce-scatter and its
 * all-gather (DeAR-style split): the shared scale, this rank's quantized
 * contribution, and the integer sums and counts of its own chunk.
 */
struct dlcp_qstate;
int dlcp_qstate_alloc(struct dlcp_qstate **qs);
void dlcp_qstate_free(struct dlcp_qstate *qs);

/*
 * Quantized collectives on FP32 @buf. First a tiny exchange of every
 * rank's max |x| (after the rotation) gives the shared scale; every rank
 * quantizes with it and the ring (or the server) adds the integers as they
 * come, on the wire at the narrowest width holding them (4/8/16/32 bits,
 * whole elements per packet), counting contributions per element exactly
 * as the FP32 collectives do (lost segments: counts, unbiased mean). The
 * sums are decompressed once, at the end. Same opts and semantics as
 * dlcp_allreduce() / dlcp_ps_push_pull(); an element lost in the
 * all-gather or pull takes this rank's own (quantized) contribution.
 */
int dlcp_allreduce_q(struct dlcp_group *g, float *buf, size_t n,
		     const struct dlcp_coll_opts *opts,
		     const struct dlcp_quant_opts *q);
int dlcp_ps_push_pull_q(struct dlcp_group *g, const float *send, float *recv,
			size_t n, const struct dlcp_coll_opts *opts,
			const struct dlcp_quant_opts *q);
/*
 * The two halves, for overlap: the reduce-scatter leaves its result in
 * @qs (without rotation, chunk dlcp_group_rank() of @buf also gets the
 * decompressed result); dlcp_all_gather_q() with the same @qs and @n (and
 * the same tag, any iteration) completes @buf.
 */
int dlcp_reduce_scatter_q(struct dlcp_group *g, float *buf, size_t n,
			  const struct dlcp_coll_opts *opts,
			  const struct dlcp_quant_opts *q,
			  struct dlcp_qstate *qs);
int dlcp_all_gather_q(struct dlcp_group *g, float *buf, size_t n,
		      const struct dlcp_coll_opts *opts,
		      struct dlcp_qstate *qs);

#ifdef __cplusplus
}
#endif

#endif /* LIBDLCP_H */

-- SPDX-License-Identifier: GPL-2.0
--
-- Wireshark/tshark dissector for DLCP, the loss-tolerant message transport
-- of kmod/dlcp.ko. The wire format is defined in kmod/dlcp_wire.h; this
-- file follows it field by field.
--
-- Registration:
--   * ip.proto 253 (native mode, IPPROTO_DLCP); preference "ipproto" for a
--     node whose module was loaded with ipproto=N.
--   * udp.port 9253 (UDP encapsulation, net.dlcp.encap=1); preference "udp_port",
--     0 disables. Also offered in "Decode As..." for UDP ports.
--
-- Usage:
--   tshark -X lua_script:tools/wireshark/dlcp.lua -r capture.pcap -Y dlcp
--   tshark -X lua_script:tools/wireshark/dlcp.lua -r capture.pcap -T fields \
--          -e dlcp.type -e dlcp.msg_id -e dlcp.msg_len -e dlcp.offset
--   wireshark: copy to ~/.local/lib/wireshark/plugins/ (or
--   $(PREFIX)/lib/wireshark/plugins) and restart.
--
-- Every field is a display filter: dlcp.type == 2 && dlcp.report.ngaps > 0,
-- dlcp.flags.retrans == 1, dlcp.msg_id == 0x1234, dlcp.port == 7000,
-- dlcp.checksum.status == 0 (bad checksums), _ws.expert (validation failures).
--
-- Packets leave with their checksum offloaded to the device, as TCP's do
-- (in UDP mode too: its pseudo-header names DLCP's protocol number there as
-- well): a capture on the sending host, or anywhere along a veth, holds them
-- unfilled (flagged bad). Capture on another host, turn the offload off on
-- the sender (ethtool -K DEV tx off), or turn "Validate the checksum" off.

local DLCP_VERSION = 1
local DLCP_PPM_MAX = 1000000

local dlcp = Proto("dlcp", "Deep Learning Communication Protocol")

-- ---------------------------------------------------------------------
-- Value strings
-- ---------------------------------------------------------------------

local T_DATA, T_REPORT, T_STOP, T_PROBE, T_ABORT = 1, 2, 3, 4, 5

local type_names = {
	[T_DATA] = "DATA",
	[T_REPORT] = "REPORT",
	[T_STOP] = "STOP",
	[T_PROBE] = "PROBE",
	[T_ABORT] = "ABORT",
}

-- fixed header length of each type (DLCP_*_HDR_LEN)
local HDR_LEN, GAP_LEN = 20, 8
local type_hdr_len = {
	[T_DATA] = 52,
	[T_REPORT] = 40,
	[T_STOP] = 28,
	[T_PROBE] = 28,
	[T_ABORT] = 28,
}

local dtype_names = {
	[0] = "bytes", [1] = "fp32", [2] = "fp16", [3] = "bf16",
	[4] = "int8", [5] = "int32",
}
local dtype_size = { [0] = 1, [1] = 4, [2] = 2, [3] = 2, [4] = 1, [5] = 4 }

-- common header flags (DLCP_HF_*) and the types they belong to
local HF = {
	{ bit = 0x01, abbr = "ackreq",    name = "Ack request",  types = { [T_DATA] = true } },
	{ bit = 0x02, abbr = "retrans",   name = "Retransmission", types = { [T_DATA] = true } },
	{ bit = 0x04, abbr = "critical",  name = "Critical",     types = { [T_DATA] = true } },
	{ bit = 0x08, abbr = "droppable", name = "Droppable",    types = { [T_DATA] = true } },
	{ bit = 0x10, abbr = "last",      name = "Last of first pass", types = { [T_DATA] = true } },
	{ bit = 0x20, abbr = "final",     name = "Final (deadline passed)", types = { [T_PROBE] = true } },
	{ bit = 0x40, abbr = "failed",    name = "Failed (message dropped)", types = { [T_STOP] = true } },
	{ bit = 0x01, abbr = "noport",    name = "No socket holds the port", types = { [T_STOP] = true } },
}
local HF_ALL = 0x7f

-- message flags (DLCP_MSG_*); DLCP_MSG_FLAGS_SEND of <linux/dlcp.h>.
-- HAS_PRIO and HAS_DROPPABLE come with the priority work: a receiver that
-- predates it drops DATA carrying them (DlcpDropField).
local MSG_FLAGS_SEND = 0x003f
local RF_ALL = 0x03

-- ---------------------------------------------------------------------
-- Fields
-- ---------------------------------------------------------------------

local f = {}

f.srcport = ProtoField.uint16("dlcp.srcport", "Source Port", base.DEC)
f.dstport = ProtoField.uint16("dlcp.dstport", "Destination Port", base.DEC)
f.port = ProtoField.uint16("dlcp.port", "Source or Destination Port", base.DEC)
f.version = ProtoField.uint8("dlcp.version", "Version", base.DEC, nil, 0xf0)
f.type = ProtoField.uint8("dlcp.type", "Type", base.DEC, type_names, 0x0f)
f.flags = ProtoField.uint8("dlcp.flags", "Flags", base.HEX)
for _, h in ipairs(HF) do
	f["flags_" .. h.abbr] = ProtoField.bool("dlcp.flags." .. h.abbr, h.name, 8,
		nil, h.bit)
end
f.flags_reserved = ProtoField.uint8("dlcp.flags.reserved", "Reserved", base.HEX,
	nil, 0x80)
f.doff = ProtoField.uint8("dlcp.doff", "Header Words", base.DEC)
f.hdr_len = ProtoField.uint16("dlcp.hdr_len", "Header Length", base.DEC)
f.prio = ProtoField.uint8("dlcp.prio", "Priority Class", base.DEC)
f.len = ProtoField.uint16("dlcp.length", "Length", base.DEC)
f.checksum = ProtoField.uint16("dlcp.checksum", "Checksum", base.HEX)
f.checksum_calc = ProtoField.uint16("dlcp.checksum_calculated",
	"Calculated Checksum", base.HEX)
f.checksum_status = ProtoField.uint8("dlcp.checksum.status", "Checksum Status",
	base.DEC, { [0] = "Bad", [1] = "Good", [2] = "Unverified" })
f.msg_id = ProtoField.uint32("dlcp.msg_id", "Message ID", base.HEX_DEC)
f.msg_len = ProtoField.uint32("dlcp.msg_len", "Message Length", base.DEC)

-- DATA
f.offset = ProtoField.uint32("dlcp.offset", "Offset", base.DEC)
f.seg_end = ProtoField.uint32("dlcp.seg_end", "Segment End", base.DEC)
f.tensor_id = ProtoField.uint32("dlcp.tensor_id", "Tensor ID", base.DEC)
f.iteration = ProtoField.uint32("dlcp.iteration", "Iteration", base.DEC)
f.budget_ppm = ProtoField.uint32("dlcp.budget_ppm", "Loss Budget (ppm)", base.DEC)
f.budget_bytes = ProtoField.uint32("dlcp.budget_bytes", "Loss Budget (bytes)",
	base.DEC)
f.layer = ProtoField.uint16("dlcp.layer", "Layer", base.DEC)
f.dtype = ProtoField.uint8("dlcp.dtype", "Data Type", base.DEC, dtype_names)
f.reserved = ProtoField.uint8("dlcp.reserved", "Reserved", base.HEX)
f.msg_flags = ProtoField.uint16("dlcp.msg_flags", "Message Flags", base.HEX)
f.msg_flags_critical = ProtoField.bool("dlcp.msg_flags.critical",
	"Whole message critical", 16, nil, 0x0001)
f.msg_flags_has_budget = ProtoField.bool("dlcp.msg_flags.has_budget",
	"Budget overrides socket", 16, nil, 0x0002)
f.msg_flags_has_layer = ProtoField.bool("dlcp.msg_flags.has_layer",
	"Layer overrides socket", 16, nil, 0x0004)
f.msg_flags_has_deadline = ProtoField.bool("dlcp.msg_flags.has_deadline",
	"Has deadline", 16, nil, 0x0008)
f.msg_flags_has_prio = ProtoField.bool("dlcp.msg_flags.has_prio",
	"Priority class overrides socket and layer", 16, nil, 0x0010)
f.msg_flags_has_droppable = ProtoField.bool("dlcp.msg_flags.has_droppable",
	"Droppable fraction overrides sysctl", 16, nil, 0x0020)
f.msg_flags_reserved = ProtoField.uint16("dlcp.msg_flags.reserved", "Reserved",
	base.HEX, nil, 0xffc0)
f.reserved2 = ProtoField.uint16("dlcp.reserved2", "Reserved", base.HEX)
f.tsval = ProtoField.uint32("dlcp.tsval", "Timestamp Value (us)", base.DEC)
f.crit_len = ProtoField.uint32("dlcp.crit_len", "Critical Bytes", base.DEC)
f.payload = ProtoField.bytes("dlcp.payload", "Payload")
f.payload_len = ProtoField.uint32("dlcp.payload_len", "Payload Length", base.DEC)
f.gso_segs = ProtoField.uint16("dlcp.gso_segs", "Super-packet of (packets)", base.DEC)

-- REPORT
f.rcvd = ProtoField.uint32("dlcp.report.rcvd", "Bytes Received", base.DEC)
f.scan_end = ProtoField.uint32("dlcp.report.scan_end", "Scan End", base.DEC)
f.tsecr = ProtoField.uint32("dlcp.tsecr", "Timestamp Echo (us)", base.DEC)
f.ce_bytes = ProtoField.uint32("dlcp.report.ce_bytes", "CE Bytes", base.DEC)
f.ngaps = ProtoField.uint16("dlcp.report.ngaps", "Number of Gaps", base.DEC)
f.rflags = ProtoField.uint8("dlcp.report.flags", "Report Flags", base.HEX)
f.rflags_probed = ProtoField.bool("dlcp.report.flags.probed", "Answers a PROBE",
	8, nil, 0x01)
f.rflags_dup = ProtoField.bool("dlcp.report.flags.dup",
	"A resent segment had already arrived", 8, nil, 0x02)
f.rflags_reserved = ProtoField.uint8("dlcp.report.flags.reserved", "Reserved",
	base.HEX, nil, 0xfc)
f.gap = ProtoField.none("dlcp.report.gap", "Gap")
f.gap_start = ProtoField.uint32("dlcp.report.gap.start", "Start", base.DEC)
f.gap_end = ProtoField.uint32("dlcp.report.gap.end", "End", base.DEC)
f.gap_len = ProtoField.uint32("dlcp.report.gap.len", "Length", base.DEC)
f.missing = ProtoField.uint32("dlcp.report.missing", "Bytes Missing (in gaps)",
	base.DEC)

-- STOP
f.lost = ProtoField.uint32("dlcp.stop.lost", "Bytes Given Up", base.DEC)

-- PROBE, ABORT
f.sent = ProtoField.uint32("dlcp.probe.sent", "Bytes Sent", base.DEC)

f.ext = ProtoField.bytes("dlcp.extension", "Header Extension (unknown)")
-- a PROBE is padded with zero header words to the length of the REPORT it
-- asks for, since no packet is answered with a longer one
f.pad = ProtoField.bytes("dlcp.probe.padding", "Padding")
f.trailing = ProtoField.bytes("dlcp.trailing", "Unexpected Payload")

local field_list = {}
for _, v in pairs(f) do
	field_list[#field_list + 1] = v
end
dlcp.fields = field_list

-- ---------------------------------------------------------------------
-- Expert info
-- ---------------------------------------------------------------------

local e = {
	short = ProtoExpert.new("dlcp.short", "Packet shorter than its header",
		expert.group.MALFORMED, expert.severity.ERROR),
	version = ProtoExpert.new("dlcp.bad_version", "Unknown DLCP version",
		expert.group.MALFORMED, expert.severity.ERROR),
	type = ProtoExpert.new("dlcp.bad_type", "Unknown packet type",
		expert.group.MALFORMED, expert.severity.ERROR),
	hdrlen = ProtoExpert.new("dlcp.bad_hdrlen",
		"Header words too small or past the packet",
		expert.group.MALFORMED, expert.severity.ERROR),
	len = ProtoExpert.new("dlcp.bad_length",
		"Length field disagrees with the packet",
		expert.group.MALFORMED, expert.severity.ERROR),
	flags = ProtoExpert.new("dlcp.bad_flags", "Unknown header flags",
		expert.group.MALFORMED, expert.severity.ERROR),
	flags_type = ProtoExpert.new("dlcp.flags_unexpected",
		"Flag not defined for this packet type",
		expert.group.PROTOCOL, expert.severity.WARN),
	msglen = ProtoExpert.new("dlcp.bad_msg_len",
		"Message length zero (or over the receiver's limit)",
		expert.group.MALFORMED, expert.severity.ERROR),
	offset = ProtoExpert.new("dlcp.bad_offset",
		"Payload empty or past the end of the message",
		expert.group.MALFORMED, expert.severity.ERROR),
	field = ProtoExpert.new("dlcp.bad_field", "Field out of range",
		expert.group.MALFORMED, expert.severity.ERROR),
	gaps = ProtoExpert.new("dlcp.bad_gaps", "Report gaps malformed",
		expert.group.MALFORMED, expert.severity.ERROR),
	align = ProtoExpert.new("dlcp.unaligned",
		"Segment does not hold whole elements of the data type",
		expert.group.PROTOCOL, expert.severity.WARN),
	reserved = ProtoExpert.new("dlcp.reserved_nonzero",
		"Reserved field not zero", expert.group.PROTOCOL,
		expert.severity.NOTE),
	ext = ProtoExpert.new("dlcp.extension",
		"Header longer than this version defines (skipped)",
		expert.group.UNDECODED, expert.severity.NOTE),
	checksum = ProtoExpert.new("dlcp.checksum_bad", "Bad checksum",
		expert.group.CHECKSUM, expert.severity.ERROR),
	retrans = ProtoExpert.new("dlcp.retransmission", "Retransmitted segment",
		expert.group.SEQUENCE, expert.severity.NOTE),
	failed = ProtoExpert.new("dlcp.failed",
		"Message dropped by the receiver (deadline passed over budget)",
		expert.group.RESPONSE_CODE, expert.severity.WARN),
	abort = ProtoExpert.new("dlcp.abort", "Sender gave up on the message",
		expert.group.RESPONSE_CODE, expert.severity.WARN),
}
local expert_list = {}
for _, v in pairs(e) do
	expert_list[#expert_list + 1] = v
end
dlcp.experts = expert_list

-- ---------------------------------------------------------------------
-- Preferences
-- ---------------------------------------------------------------------

dlcp.prefs.ipproto = Pref.uint("IP protocol number", 253,
	"IP protocol number of DLCP (module parameter ipproto, default 253)")
dlcp.prefs.udp_port = Pref.uint("UDP port", 9253,
	"UDP port of DLCP's UDP encapsulation (0: none)")
dlcp.prefs.check_checksum = Pref.bool("Validate the checksum", true,
	"Verify the mandatory checksum (IPv4 only)")
dlcp.prefs.max_msg = Pref.uint("Largest message length", 1073741824,
	"Message lengths above this are flagged (net.dlcp.max_msg_size of the "
	.. "receiver; the hard limit is 2^30)")

-- ---------------------------------------------------------------------
-- Checksum: Internet checksum over the IPv4 pseudo-header and the packet
-- ---------------------------------------------------------------------

local ip_src_f = Field.new("ip.src")
local ip_dst_f = Field.new("ip.dst")
local ip_proto_f = Field.new("ip.proto")

local function last_of(fieldfn)
	local all = { fieldfn() }
	return all[#all]
end

local function sum16(tvb, off, len, acc)
	local i = 0
	while i + 1 < len do
		acc = acc + tvb(off + i, 2):uint()
		i = i + 2
	end
	if i < len then
		acc = acc + tvb(off + i, 1):uint() * 256
	end
	return acc
end

local function fold(acc)
	while acc > 0xffff do
		acc = (acc % 0x10000) + math.floor(acc / 0x10000)
	end
	return acc
end

-- Returns computed checksum (as it should be in the header), or nil.
local function compute_checksum(tvb, len, proto)
	local src, dst = last_of(ip_src_f), last_of(ip_dst_f)
	if not src or not dst then
		return nil
	end
	local acc = 0
	acc = sum16(src.range:tvb(), 0, 4, acc)
	acc = sum16(dst.range:tvb(), 0, 4, acc)
	acc = acc + proto + len
	acc = sum16(tvb, 0, 10, acc)	-- ports, ver/type, flags, doff, prio, length
	-- the checksum field (10..11) counts as zero
	acc = sum16(tvb, 12, len - 12, acc)
	local c = 0xffff - fold(acc)
	return c
end

-- ---------------------------------------------------------------------
-- Dissection
-- ---------------------------------------------------------------------

-- is @bit a flag of packets of @type? (a bit means one flag per type)
local function flag_of_type(bit, type)
	for _, h in ipairs(HF) do
		if h.bit == bit and h.types[type] then
			return true
		end
	end
	return false
end

local function add_flag_bits(tree, range, type)
	local v = range:uint()
	for _, h in ipairs(HF) do
		if h.types[type] or not flag_of_type(h.bit, type) then
			local it = tree:add(f["flags_" .. h.abbr], range)
			if bit32.band(v, h.bit) ~= 0 and not h.types[type] then
				it:add_proto_expert_info(e.flags_type,
					h.name .. " flag on a " ..
					(type_names[type] or "?") .. " packet")
			end
		end
	end
	local r = tree:add(f.flags_reserved, range)
	if bit32.band(v, bit32.bnot(HF_ALL)) ~= 0 then
		r:add_proto_expert_info(e.flags)
	end
end

local function flag_string(v, type)
	local s = {}
	for _, h in ipairs(HF) do
		if bit32.band(v, h.bit) ~= 0 and
		   (h.types[type] or not flag_of_type(h.bit, type)) then
			s[#s + 1] = h.abbr:upper()
		end
	end
	return table.concat(s, ",")
end

local function check_reserved(tree, field, range)
	local it = tree:add(field, range)
	if range:uint() ~= 0 then
		it:add_proto_expert_info(e.reserved)
	end
end

local function dissect_data(tvb, tree, hlen, len, msg_len, info)
	tree:add(f.offset, tvb(20, 4))
	local off = tvb(20, 4):uint()
	tree:add(f.tensor_id, tvb(24, 4))
	tree:add(f.iteration, tvb(28, 4))
	local bud = tree:add(f.budget_ppm, tvb(32, 4))
	local ppm = tvb(32, 4):uint()
	if ppm > DLCP_PPM_MAX then
		bud:add_proto_expert_info(e.field, "Loss budget over 1000000 ppm")
	else
		tree:add(f.budget_bytes, math.floor(msg_len * ppm / DLCP_PPM_MAX))
			:set_generated()
	end
	tree:add(f.layer, tvb(36, 2))
	local dt = tvb(38, 1):uint()
	local dti = tree:add(f.dtype, tvb(38, 1))
	if not dtype_names[dt] then
		dti:add_proto_expert_info(e.field, "Unknown data type " .. dt)
	end
	check_reserved(tree, f.reserved, tvb(39, 1))
	local mf = tvb(40, 2)
	local mft = tree:add(f.msg_flags, mf)
	mft:add(f.msg_flags_critical, mf)
	mft:add(f.msg_flags_has_budget, mf)
	mft:add(f.msg_flags_has_layer, mf)
	mft:add(f.msg_flags_has_deadline, mf)
	mft:add(f.msg_flags_has_prio, mf)
	mft:add(f.msg_flags_has_droppable, mf)
	local mfr = mft:add(f.msg_flags_reserved, mf)
	if bit32.band(mf:uint(), bit32.bnot(MSG_FLAGS_SEND)) % 0x10000 ~= 0 then
		mfr:add_proto_expert_info(e.field, "Unknown message flags")
	end
	check_reserved(tree, f.reserved2, tvb(42, 2))
	tree:add(f.tsval, tvb(44, 4))
	local cl = tree:add(f.crit_len, tvb(48, 4))
	if tvb(48, 4):uint() > msg_len then
		cl:add_proto_expert_info(e.field, "Critical bytes exceed the message")
	end

	local plen = len - hlen
	tree:add(f.payload_len, plen):set_generated()
	local endi = tree:add(f.seg_end, off + plen)
	endi:set_generated()
	if plen <= 0 or off >= msg_len or plen > msg_len - off then
		endi:add_proto_expert_info(e.offset)
	end
	if dtype_size[dt] and (plen % dtype_size[dt] ~= 0 or
			       off % dtype_size[dt] ~= 0) then
		endi:add_proto_expert_info(e.align)
	end
	local avail = tvb:len() - hlen
	if plen > 0 and avail > 0 then
		tree:add(f.payload, tvb(hlen, math.min(plen, avail)))
	end
	info[#info + 1] = string.format("off=%u plen=%u", off, plen)
	if tvb:len() >= 2 then
		local flags = tvb(5, 1):uint()
		if bit32.band(flags, 0x02) ~= 0 then
			tree:add_proto_expert_info(e.retrans)
		end
	end
end

local function dissect_report(tvb, tree, hlen, len, msg_len, info)
	local rc = tree:add(f.rcvd, tvb(20, 4))
	if tvb(20, 4):uint() > msg_len then
		rc:add_proto_expert_info(e.field, "Bytes received exceed the message")
	end
	local scan_end = tvb(24, 4):uint()
	local se = tree:add(f.scan_end, tvb(24, 4))
	if scan_end > msg_len then
		se:add_proto_expert_info(e.field, "Scan end past the message")
	end
	tree:add(f.tsecr, tvb(28, 4))
	tree:add(f.ce_bytes, tvb(32, 4))
	local ngaps = tvb(36, 2):uint()
	local ng = tree:add(f.ngaps, tvb(36, 2))
	local rf = tvb(38, 1)
	local rft = tree:add(f.rflags, rf)
	rft:add(f.rflags_probed, rf)
	rft:add(f.rflags_dup, rf)
	local rfr = rft:add(f.rflags_reserved, rf)
	if bit32.band(rf:uint(), bit32.bnot(RF_ALL)) % 0x100 ~= 0 then
		rfr:add_proto_expert_info(e.field, "Unknown report flags")
	end
	check_reserved(tree, f.reserved, tvb(39, 1))

	local plen = len - hlen
	if plen ~= ngaps * GAP_LEN then
		ng:add_proto_expert_info(e.gaps, string.format(
			"Report gaps malformed: %u gaps need %u bytes, %u follow the header", ngaps,
			ngaps * GAP_LEN, plen))
	end
	local n = math.min(ngaps, math.floor((tvb:len() - hlen) / GAP_LEN))
	local prev, missing = 0, 0
	for i = 0, n - 1 do
		local o = hlen + i * GAP_LEN
		local s, en = tvb(o, 4):uint(), tvb(o + 4, 4):uint()
		local gt = tree:add(f.gap, tvb(o, GAP_LEN))
		gt:append_text(string.format(" %u: [%u, %u)", i, s, en))
		gt:add(f.gap_start, tvb(o, 4))
		gt:add(f.gap_end, tvb(o + 4, 4))
		if en >= s then
			gt:add(f.gap_len, en - s):set_generated()
			missing = missing + en - s
		end
		if s < prev or en <= s or en > scan_end then
			gt:add_proto_expert_info(e.gaps,
				"Report gaps malformed: gap out of order, empty or past the scan end")
		end
		prev = en
	end
	tree:add(f.missing, missing):set_generated()
	info[#info + 1] = string.format("rcvd=%u scan_end=%u gaps=%u%s%s",
		tvb(20, 4):uint(), scan_end, ngaps,
		bit32.band(rf:uint(), 1) ~= 0 and " PROBED" or "",
		bit32.band(rf:uint(), 2) ~= 0 and " DUP" or "")
end

local function dissect_stop(tvb, tree, hlen, len, msg_len, info)
	local lo = tree:add(f.lost, tvb(20, 4))
	if tvb(20, 4):uint() > msg_len then
		lo:add_proto_expert_info(e.field, "Bytes given up exceed the message")
	end
	tree:add(f.tsecr, tvb(24, 4))
	info[#info + 1] = string.format("lost=%u", tvb(20, 4):uint())
	if bit32.band(tvb(5, 1):uint(), 0x40) ~= 0 then
		tree:add_proto_expert_info(e.failed)
	end
end

local function dissect_probe(tvb, tree, hlen, len, msg_len, info, type)
	local se = tree:add(f.sent, tvb(20, 4))
	if tvb(20, 4):uint() > msg_len then
		se:add_proto_expert_info(e.field, "Bytes sent exceed the message")
	end
	tree:add(f.tsval, tvb(24, 4))
	info[#info + 1] = string.format("sent=%u", tvb(20, 4):uint())
	if type == T_ABORT then
		tree:add_proto_expert_info(e.abort)
	end
end

function dlcp.dissector(tvb, pinfo, root)
	local caplen = tvb:len()
	-- the DLCP length is the IP (or UDP) payload length
	local wire_len = tvb:reported_length_remaining()
	if caplen < 1 then
		return 0
	end
	pinfo.cols.protocol = "DLCP"
	local tree = root:add(dlcp, tvb())

	if wire_len < HDR_LEN or caplen < HDR_LEN then
		tree:add_proto_expert_info(e.short)
		pinfo.cols.info = "DLCP (short packet)"
		return caplen
	end

	local sport, dport = tvb(0, 2):uint(), tvb(2, 2):uint()
	tree:add(f.srcport, tvb(0, 2))
	tree:add(f.dstport, tvb(2, 2))
	tree:add(f.port, tvb(0, 2)):set_hidden()
	tree:add(f.port, tvb(2, 2)):set_hidden()

	local vt = tvb(4, 1)
	local version = math.floor(vt:uint() / 16)
	local type = vt:uint() % 16
	local vi = tree:add(f.version, vt)
	if version ~= DLCP_VERSION then
		vi:add_proto_expert_info(e.version)
	end
	local ti = tree:add(f.type, vt)
	local tname = type_names[type]
	if not tname then
		ti:add_proto_expert_info(e.type)
	end

	local flags = tvb(5, 1):uint()
	local ft = tree:add(f.flags, tvb(5, 1))
	local fs = flag_string(flags, type)
	if fs ~= "" then
		ft:append_text(" (" .. fs .. ")")
	end
	add_flag_bits(ft, tvb(5, 1), type)

	local doff = tvb(6, 1):uint()
	local hlen = doff * 4
	local di = tree:add(f.doff, tvb(6, 1))
	tree:add(f.hdr_len, hlen):set_generated()
	tree:add(f.prio, tvb(7, 1))

	local len = tvb(8, 2):uint()
	local li = tree:add(f.len, tvb(8, 2))
	-- a super-packet (net.dlcp.gso, udp_gso), seen whole on the host that
	-- sent it or past a veth: the header of its first packet, whose length
	-- it gives, then the payload of all its packets, of that one size
	local dhl = type_hdr_len[T_DATA]
	local segs = 1
	if type == T_DATA and len ~= wire_len and len > dhl and
	   wire_len >= 2 * len - dhl and (wire_len - dhl) % (len - dhl) == 0 then
		segs = math.floor((wire_len - dhl) / (len - dhl))
		tree:add(f.gso_segs, segs):set_generated()
	elseif len ~= wire_len then
		li:add_proto_expert_info(e.len, string.format(
			"Length field disagrees with the packet: %u, IP payload %u bytes", len, wire_len))
	end

	local ck = tvb(10, 2):uint()
	local ci = tree:add(f.checksum, tvb(10, 2))
	local proto = last_of(ip_proto_f)
	-- inside UDP the pseudo-header names DLCP's protocol number all the same
	local pproto = proto and proto.value
	if pproto == 17 then
		pproto = dlcp.prefs.ipproto
	end
	local status = 2
	if dlcp.prefs.check_checksum and proto and
	   caplen == wire_len and len == wire_len then
		local calc = compute_checksum(tvb, wire_len, pproto)
		if calc then
			if calc == ck or (calc == 0 and ck == 0xffff) or
			   (calc == 0xffff and ck == 0) then
				status = 1
				ci:append_text(" [correct]")
			else
				status = 0
				ci:append_text(string.format(
					" [incorrect, should be 0x%04x]", calc))
				ci:add_proto_expert_info(e.checksum)
			end
			tree:add(f.checksum_calc, calc):set_generated()
		end
	else
		ci:append_text(" [unverified]")
	end
	tree:add(f.checksum_status, status):set_generated()

	tree:add(f.msg_id, tvb(12, 4))
	local msg_id = tvb(12, 4):uint()
	local msg_len = tvb(16, 4):uint()
	local mi = tree:add(f.msg_len, tvb(16, 4))
	if msg_len == 0 or msg_len > dlcp.prefs.max_msg then
		mi:add_proto_expert_info(e.msglen)
	end

	local info = {
		string.format("%u → %u %s", sport, dport,
			tname or ("type " .. type)),
	}
	if fs ~= "" then
		info[#info + 1] = "[" .. fs .. "]"
	end
	if segs > 1 then
		info[#info + 1] = string.format("super-packet of %u", segs)
	end
	info[#info + 1] = string.format("msg=0x%08x len=%u", msg_id, msg_len)
	tree:append_text(string.format(", Src Port: %u, Dst Port: %u, %s",
		sport, dport, tname or ("type " .. type)))

	if not tname or version ~= DLCP_VERSION then
		pinfo.cols.info = table.concat(info, " ")
		return caplen
	end
	local min = type_hdr_len[type]
	if wire_len < min or caplen < min then
		tree:add_proto_expert_info(e.short, string.format(
			"Packet shorter than its header: %s needs %u bytes, %u present", tname, min,
			math.min(wire_len, caplen)))
		pinfo.cols.info = table.concat(info, " ")
		return caplen
	end
	if hlen < min or hlen > wire_len then
		di:add_proto_expert_info(e.hdrlen, string.format(
			"Header words too small or past the packet: %u bytes, the %s header is %u, the packet %u",
			hlen, tname, min, wire_len))
		hlen = min
	elseif hlen > min and type == T_PROBE then
		tree:add(f.pad, tvb(min, math.min(hlen, caplen) - min))
	elseif hlen > min then
		local x = tree:add(f.ext, tvb(min, math.min(hlen, caplen) - min))
		x:add_proto_expert_info(e.ext)
	end

	if type == T_DATA then
		dissect_data(tvb, tree, hlen, wire_len, msg_len, info)
	elseif type == T_REPORT then
		dissect_report(tvb, tree, hlen, wire_len, msg_len, info)
	elseif type == T_STOP then
		dissect_stop(tvb, tree, hlen, wire_len, msg_len, info)
	else
		dissect_probe(tvb, tree, hlen, wire_len, msg_len, info, type)
	end
	if type ~= T_DATA and type ~= T_REPORT and wire_len > hlen then
		local t = tree:add(f.trailing, tvb(hlen, math.min(caplen, wire_len) - hlen))
		t:add_proto_expert_info(e.field, tname .. " carries no payload")
	end

	pinfo.cols.info = table.concat(info, " ")
	return caplen
end

-- ---------------------------------------------------------------------
-- Registration
-- ---------------------------------------------------------------------

local ip_table = DissectorTable.get("ip.proto")
local udp_table = DissectorTable.get("udp.port")
local cur_ipproto, cur_udp_port

local function register()
	if cur_ipproto then
		ip_table:remove(cur_ipproto, dlcp)
	end
	if cur_udp_port and cur_udp_port ~= 0 then
		udp_table:remove(cur_udp_port, dlcp)
	end
	cur_ipproto = dlcp.prefs.ipproto
	cur_udp_port = dlcp.prefs.udp_port
	ip_table:add(cur_ipproto, dlcp)
	if cur_udp_port ~= 0 then
		udp_table:add(cur_udp_port, dlcp)
	end
end

function dlcp.prefs_changed()
	if dlcp.prefs.ipproto ~= cur_ipproto or
	   dlcp.prefs.udp_port ~= cur_udp_port then
		register()
	end
end

register()
udp_table:add_for_decode_as(dlcp)

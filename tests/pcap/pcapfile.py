# SPDX-License-Identifier: BSD-3-Clause
"""Classic pcap read and write, pcapng write: enough to make test inputs from the rxe captures."""
import struct


class Pcap:
    @classmethod
    def new(cls, linktype):
        """An empty little-endian capture to fill with records."""
        c = cls.__new__(cls)
        c.end, c.snaplen, c.linktype, c.recs = "<", 262144, linktype, []
        return c

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        magic = struct.unpack("<I", data[:4])[0]
        if magic == 0xA1B2C3D4:
            self.end = "<"
        elif magic == 0xD4C3B2A1:
            self.end = ">"
        else:
            raise SystemExit("%s: not a microsecond pcap file" % path)
        self.snaplen, self.linktype = struct.unpack(self.end + "II", data[16:24])
        self.recs = []	# [sec, usec, wirelen, frame, file offset of the record]
        off = 24
        while off < len(data):
            sec, usec, cap, wire = struct.unpack(self.end + "IIII", data[off:off + 16])
            self.recs.append([sec, usec, wire, bytearray(data[off + 16:off + 16 + cap]), off])
            off += 16 + cap

    def write(self, path, linktype=None, recs=None):
        e = self.end
        out = bytearray(struct.pack(e + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144,
                                    self.linktype if linktype is None else linktype))
        for sec, usec, wire, frame, _ in (self.recs if recs is None else recs):
            out += struct.pack(e + "IIII", sec, usec, len(frame), max(wire, len(frame)))
            out += frame
        with open(path, "wb") as f:
            f.write(out)


def write_pcapng(path, cap):
    """The same frames as pcapng: section header, one interface, enhanced packet blocks."""
    def block(btype, body):
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", btype, n) + body + struct.pack("<I", n)
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", cap.linktype, 0, 262144))
    for sec, usec, wire, frame, _ in cap.recs:
        t = sec * 1000000 + usec
        out += block(6, struct.pack("<IIIII", 0, t >> 32, t & 0xFFFFFFFF, len(frame),
                                    wire) + bytes(frame))
    with open(path, "wb") as f:
        f.write(out)

package cli

import (
	"bytes"
	"compress/lzw"
	"encoding/binary"
	"image"
	"image/color"
	"math/bits"
)

// The GIF89a format as `evolve play -gif` writes it: a header with a
// global colour table of 256 entries and the NETSCAPE2.0 extension (loop
// forever), then per frame a graphic control extension (delay, disposal,
// transparent index), an image descriptor of the frame's rectangle, an
// optional local colour table and the LZW-compressed palette indices in
// sub-blocks of at most 255 bytes, then the trailer. image/gif encodes
// only a whole gif.GIF, whose frames must all be held uncompressed; these
// functions let gifWriter compress each frame as it comes.

// gifDisposalNone is the disposal method "do not dispose": the frame stays
// on screen under the next one.
const gifDisposalNone = 1

// gifHeader returns the header of a GIF of the given size whose global
// colour table is global, padded with black to 256 entries.
func gifHeader(size image.Point, global color.Palette) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, uint16(size.X))
	b = binary.LittleEndian.AppendUint16(b, uint16(size.Y))
	// A global table of 2^(7+1) colours of 8 bits, background index 0,
	// square pixels.
	b = append(b, 0x80|7<<4|7, 0, 0)
	b = appendColorTable(b, global, 8)
	b = append(b, 0x21, 0xff, 11)
	b = append(b, "NETSCAPE2.0"...)
	return append(b, 3, 1, 0, 0, 0) // loop count 0: forever
}

// gifCodeSize returns the bits a palette index of a palette of n colours
// takes, at least 2 (the least LZW code size GIF allows).
func gifCodeSize(n int) int { return max(2, bits.Len(uint(n-1))) }

// appendColorTable appends the 2^size colours of p, padded with black.
func appendColorTable(b []byte, p color.Palette, size int) []byte {
	for i := range 1 << size {
		var c color.RGBA
		if i < len(p) {
			c = color.RGBAModel.Convert(p[i]).(color.RGBA)
		}
		b = append(b, c.R, c.G, c.B)
	}
	return b
}

// gifFrame is one frame for appendGIFFrame: the rectangle r it covers, its
// palette indices row by row, the palette they index (local, or the
// number of global colours in use), and whether index 0 is transparent.
type gifFrame struct {
	r           image.Rectangle
	pix         []byte
	local       color.Palette // nil: the global colour table
	colours     int           // the size of the palette pix indexes
	transparent bool
	delay       int // in hundredths of a second
}

// appendGIFFrame appends frame f to b, its indices compressed with the
// scratch buffer z. The indices must be below f.colours.
func appendGIFFrame(b *bytes.Buffer, z *bytes.Buffer, f gifFrame) {
	size := gifCodeSize(f.colours)
	flags := byte(gifDisposalNone << 2)
	if f.transparent {
		flags |= 1
	}
	gce := []byte{0x21, 0xf9, 4, flags, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(gce[4:], uint16(f.delay))
	b.Write(gce)
	desc := []byte{0x2c}
	for _, v := range []int{f.r.Min.X, f.r.Min.Y, f.r.Dx(), f.r.Dy()} {
		desc = binary.LittleEndian.AppendUint16(desc, uint16(v))
	}
	if f.local == nil {
		b.Write(append(desc, 0))
	} else {
		b.Write(appendColorTable(append(desc, 0x80|byte(size-1)), f.local, size))
	}
	z.Reset()
	lw := lzw.NewWriter(z, lzw.LSB, size)
	if _, err := lw.Write(f.pix); err != nil {
		panic("cli: appendGIFFrame: " + err.Error()) // an index not below f.colours
	}
	lw.Close()
	b.WriteByte(byte(size))
	for data := z.Bytes(); len(data) > 0; {
		n := min(len(data), 255)
		b.WriteByte(byte(n))
		b.Write(data[:n])
		data = data[n:]
	}
	b.WriteByte(0)
}

package xds

import "testing"

// recordingPool is a mem.BufferPool that counts what reaches it.
type recordingPool struct{ gets, puts int }

func (p *recordingPool) Get(length int) *[]byte {
	p.gets++
	b := make([]byte, length)
	return &b
}

func (p *recordingPool) Put(*[]byte) { p.puts++ }

// Buffers over 1 MiB (whole large responses) are left to the collector;
// smaller ones are pooled as gRPC would.
func TestSmallBufferPoolKeepsNoLargeBuffers(t *testing.T) {
	under := &recordingPool{}
	pool := smallBufferPool{under}
	small := pool.Get(16 << 10)
	large := pool.Get(10 << 20)
	if len(*small) != 16<<10 || len(*large) != 10<<20 {
		t.Fatalf("buffers of %d and %d bytes", len(*small), len(*large))
	}
	pool.Put(small)
	pool.Put(large)
	if under.gets != 1 || under.puts != 1 {
		t.Fatalf("the underlying pool saw %d gets and %d puts, want only the small buffer's", under.gets, under.puts)
	}
}

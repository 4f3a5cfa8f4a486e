// Command example proves a batch of partitions with cuzk, verifies the proofs and prints
// the engine's figures: the whole life of a proving service in one screen. The
// partitions come from a fixture directory written by cuzk_fixtures (in Curio, from the
// circuit synthesizer):
//
//	go run ./example FIXTURE_DIR
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	cuzk "github.com/cuzk/cuzk/go"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: example FIXTURE_DIR")
	}
	dir := os.Args[1]
	fmt.Println(cuzk.Version())

	// One engine per process, shared by every goroutine that proves.
	engine, err := cuzk.NewEngine(cuzk.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()

	// Params: load once per circuit and keep; checked=false for files whose digest you
	// verified (as Filecoin nodes do for their .params).
	srs, err := engine.LoadSRS(filepath.Join(dir, "params.bin"), false)
	if err != nil {
		log.Fatal(err)
	}
	defer srs.Close()
	shape, err := srs.Shape()
	if err != nil {
		log.Fatal(err)
	}

	var parts []cuzk.Partition
	var public [][]byte
	for i := 0; ; i++ {
		p := filepath.Join(dir, fmt.Sprint("p", i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		parts = append(parts, cuzk.Partition{
			A: read(p, "a.bin"), B: read(p, "b.bin"), C: read(p, "c.bin"),
			Input: read(p, "input.bin"), Aux: read(p, "aux.bin"),
			AAuxDensity:   cuzk.Bitmap{Words: words(read(p, "a_aux_density.bin")), Bits: shape.Aux},
			BInputDensity: cuzk.Bitmap{Words: words(read(p, "b_input_density.bin")), Bits: shape.Inputs},
			BAuxDensity:   cuzk.Bitmap{Words: words(read(p, "b_aux_density.bin")), Bits: shape.Aux},
		})
		public = append(public, read(p, "public.bin"))
	}

	// The context bounds the whole proof: when it ends, the job is cancelled and its
	// queued partitions leave the engine at once.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	job, err := engine.ProveStart(ctx, srs, parts, cuzk.WithPriority(cuzk.PriorityPoRepSnap))
	if err != nil {
		log.Fatal(err) // errors.Is(err, cuzk.ErrInvalidAssignment) etc. say why
	}
	defer job.Close()
	proofs, err := job.Finish(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for i, proof := range proofs {
		ok, err := srs.Verify(proof[:], public[i])
		fmt.Printf("partition %d: proof %x… verifies: %v %v\n", i, proof[:8], ok, err)
	}
	stats, err := engine.Stats()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d partitions proved, device hold p50 %v, finalize p50 %v\n",
		stats.PartitionsProved, stats.MutexHold.P50, stats.Finalize.P50)
}

func read(dir, name string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		log.Fatal(err)
	}
	return b
}

func words(b []byte) []uint64 {
	w := make([]uint64, len(b)/8)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return w
}

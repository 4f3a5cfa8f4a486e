package cuzk_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	cuzk "github.com/cuzk/cuzk/go"
)

// fixture is what src/bin/cuzk_fixtures.rs writes: params, partitions, fixed randomizers
// and the proofs cuzk's CPU prover (checked byte for byte against bellperson) makes from
// them.
type fixture struct {
	dir                              string
	partitions, inputs, aux, publics int
	params, vk, r, s, proofs         []byte
	parts                            []cuzk.Partition
	public                           [][]byte
}

var fx *fixture

func TestMain(m *testing.M) {
	dir, cleanup, err := fixtureDir()
	if err == nil {
		fx, err = loadFixture(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuzk tests:", err)
		os.Exit(2)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// fixtureDir is $CUZK_FIXTURE_DIR (scripts/test-go.sh writes it), or a fresh fixture from
// the generator cargo built, so that a plain `go test` works after the documented build.
func fixtureDir() (string, func(), error) {
	if d := os.Getenv("CUZK_FIXTURE_DIR"); d != "" {
		return d, func() {}, nil
	}
	gen := filepath.Join("..", "target", "release", "cuzk_fixtures")
	if _, err := os.Stat(gen); err != nil {
		return "", nil, fmt.Errorf("set CUZK_FIXTURE_DIR, or build the generator: "+
			"cargo build --release --features test-fixtures --bin cuzk_fixtures (%v)", err)
	}
	d, err := os.MkdirTemp("", "cuzk-go-fixture-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(d) }
	if out, err := exec.Command(gen, d).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s: %v\n%s", gen, err, out)
	}
	return d, cleanup, nil
}

func loadFixture(dir string) (*fixture, error) {
	f := &fixture{dir: dir}
	manifest, err := os.Open(filepath.Join(dir, "fixture.txt"))
	if err != nil {
		return nil, err
	}
	defer manifest.Close()
	values := map[string]int{}
	sc := bufio.NewScanner(manifest)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if values[k], err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("fixture.txt: %s: %v", k, err)
		}
	}
	f.partitions, f.inputs, f.aux, f.publics = values["partitions"], values["inputs"], values["aux"], values["public_inputs"]
	if f.partitions == 0 {
		return nil, fmt.Errorf("%s: no partitions", dir)
	}
	read := func(name string) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = os.ReadFile(filepath.Join(dir, name))
		return b
	}
	words := func(name string) []uint64 {
		b := read(name)
		w := make([]uint64, len(b)/8)
		for i := range w {
			w[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		return w
	}
	f.params, f.vk, f.r, f.s, f.proofs = read("params.bin"), read("vk.bin"), read("r.bin"), read("s.bin"), read("proofs.bin")
	for i := 0; i < f.partitions; i++ {
		p := fmt.Sprintf("p%d/", i)
		f.parts = append(f.parts, cuzk.Partition{
			A: read(p + "a.bin"), B: read(p + "b.bin"), C: read(p + "c.bin"),
			Input: read(p + "input.bin"), Aux: read(p + "aux.bin"),
			AAuxDensity:   cuzk.Bitmap{Words: words(p + "a_aux_density.bin"), Bits: f.aux},
			BInputDensity: cuzk.Bitmap{Words: words(p + "b_input_density.bin"), Bits: f.inputs},
			BAuxDensity:   cuzk.Bitmap{Words: words(p + "b_aux_density.bin"), Bits: f.aux},
		})
		f.public = append(f.public, read(p+"public.bin"))
	}
	if err != nil {
		return nil, err
	}
	if len(f.proofs) != f.partitions*cuzk.ProofBytes {
		return nil, fmt.Errorf("proofs.bin holds %d bytes for %d partitions", len(f.proofs), f.partitions)
	}
	return f, nil
}

// expected is partition i's proof for the fixture's r and s.
func (f *fixture) expected(i int) []byte {
	return f.proofs[i*cuzk.ProofBytes : (i+1)*cuzk.ProofBytes]
}

// clone deep-copies partition i, so a test can corrupt it without touching the fixture.
func (f *fixture) clone(i int) cuzk.Partition {
	p := f.parts[i]
	cp := func(b []byte) []byte { return append([]byte(nil), b...) }
	cw := func(b cuzk.Bitmap) cuzk.Bitmap {
		return cuzk.Bitmap{Words: append([]uint64(nil), b.Words...), Bits: b.Bits}
	}
	return cuzk.Partition{
		A: cp(p.A), B: cp(p.B), C: cp(p.C), Input: cp(p.Input), Aux: cp(p.Aux),
		AAuxDensity: cw(p.AAuxDensity), BInputDensity: cw(p.BInputDensity), BAuxDensity: cw(p.BAuxDensity),
	}
}

// Helpers shared by the tests.

func newEngine(t testing.TB, cfg cuzk.Config) *cuzk.Engine {
	t.Helper()
	e, err := cuzk.NewEngine(cfg)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

func loadSRS(t testing.TB) *cuzk.SRS {
	t.Helper()
	s, err := cuzk.SRSFromBytes(fx.params, false)
	if err != nil {
		t.Fatalf("SRSFromBytes: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

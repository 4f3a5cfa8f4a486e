package cuzk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cuzk "github.com/cuzk/cuzk/go"
)

func TestVersionNamesLibraryAndBackend(t *testing.T) {
	v := cuzk.Version()
	want := fmt.Sprintf("cuzk %d.%d.%d", cuzk.VersionMajor, cuzk.VersionMinor, cuzk.VersionPatch)
	if !strings.HasPrefix(v, want) || !strings.Contains(v, "backend in use") {
		t.Fatalf("Version() = %q, want it to start with %q and name the backend", v, want)
	}
	if s := cuzk.StatusTimeout.String(); s != "CUZK_STATUS_TIMEOUT" {
		t.Fatalf("StatusTimeout.String() = %q", s)
	}
}

func checkProofs(t testing.TB, got []cuzk.Proof) {
	t.Helper()
	if len(got) != fx.partitions {
		t.Fatalf("got %d proofs, want %d", len(got), fx.partitions)
	}
	for i := range got {
		if !bytes.Equal(got[i][:], fx.expected(i)) {
			t.Fatalf("proof %d differs from the fixture's", i)
		}
	}
}

func TestProveMatchesFixtureAndVerifies(t *testing.T) {
	e := newEngine(t, cuzk.Config{})
	srs, err := e.LoadSRS(filepath.Join(fx.dir, "params.bin"), true)
	if err != nil {
		t.Fatalf("LoadSRS: %v", err)
	}
	defer srs.Close()
	shape, err := srs.Shape()
	if err != nil {
		t.Fatal(err)
	}
	if shape.Inputs != fx.inputs || shape.Aux != fx.aux || shape.PublicInputs != fx.publics {
		t.Fatalf("Shape() = %+v, fixture has %d inputs, %d aux", shape, fx.inputs, fx.aux)
	}
	vk, err := srs.VerifyingKey()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(vk, fx.vk) {
		t.Fatalf("VerifyingKey() differs from vk.bin (%d vs %d bytes)", len(vk), len(fx.vk))
	}

	job, err := e.ProveStart(context.Background(), srs, fx.parts,
		cuzk.WithRandomness(fx.r, fx.s), cuzk.WithPriority(cuzk.PriorityPoRepSnap))
	if err != nil {
		t.Fatalf("ProveStart: %v", err)
	}
	defer job.Close()
	if job.Partitions() != fx.partitions {
		t.Fatalf("Partitions() = %d", job.Partitions())
	}
	proofs, err := job.Finish(context.Background())
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	checkProofs(t, proofs)
	// A second Finish returns the same proofs; Poll agrees that the job is done.
	again, err := job.Finish(context.Background())
	if err != nil || len(again) != len(proofs) || again[0] != proofs[0] {
		t.Fatalf("second Finish: %v", err)
	}
	if st, proved, err := job.Poll(); err != nil || st != cuzk.JobDone || proved != fx.partitions {
		t.Fatalf("Poll() = %v, %d, %v", st, proved, err)
	}

	for i, p := range proofs {
		if ok, err := srs.Verify(p[:], fx.public[i]); err != nil || !ok {
			t.Fatalf("SRS.Verify(proof %d) = %v, %v", i, ok, err)
		}
		if ok, err := cuzk.Verify(vk, p[:], fx.public[i]); err != nil || !ok {
			t.Fatalf("Verify(proof %d) = %v, %v", i, ok, err)
		}
	}
	// Wrong public inputs: a proof that does not verify is (false, nil).
	wrong := append([]byte(nil), fx.public[0]...)
	wrong[0] ^= 1
	if ok, err := srs.Verify(proofs[0][:], wrong); err != nil || ok {
		t.Fatalf("Verify with a changed public input = %v, %v; want false, nil", ok, err)
	}
	if fx.partitions > 1 {
		if ok, err := cuzk.Verify(vk, proofs[1][:], fx.public[0]); err != nil || ok {
			t.Fatalf("proof 1 against partition 0's inputs = %v, %v", ok, err)
		}
	}

	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.JobsAdmitted != 1 || st.JobsFinished != 1 || st.PartitionsProved != uint64(fx.partitions) {
		t.Fatalf("stats after one job: %+v", st)
	}
	if len(st.Devices) == 0 || st.Devices[0].Partitions == 0 || st.MutexHold.Count != uint64(fx.partitions) ||
		st.Finalize.Count != uint64(fx.partitions) || st.Uptime <= 0 || st.MemoryBudgetBytes == 0 ||
		st.MemoryPeakBytes == 0 || st.MemoryReservedBytes != 0 {
		t.Fatalf("stats figures: %+v", st)
	}
	if st.Stages.NTT.Count != uint64(fx.partitions) || st.Stages.MSMBG1.Count != uint64(fx.partitions) ||
		st.FinalizeBG2.Count != uint64(fx.partitions) {
		t.Fatalf("stage figures: %+v, B_g2 %+v", st.Stages, st.FinalizeBG2)
	}
	if d := st.Devices[0]; (d.Backend == cuzk.BackendCUDA) != (d.GPUOrdinal >= 0) {
		t.Fatalf("device 0: backend %v with GPU ordinal %d", d.Backend, d.GPUOrdinal)
	}
	prom, err := e.Prometheus()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prom, "# TYPE") || strings.ContainsRune(prom, 0) {
		t.Fatalf("Prometheus() is not exposition text:\n%s", prom)
	}
	if !strings.Contains(prom, fmt.Sprintf(" %d\n", st.PartitionsProved)) {
		t.Fatalf("Prometheus() does not report %d partitions proved:\n%s", st.PartitionsProved, prom)
	}
	if !strings.Contains(prom, fmt.Sprintf("cuzk_start_stage_seconds_count{stage=\"msm_h\"} %d\n", fx.partitions)) ||
		!strings.Contains(prom, fmt.Sprintf("cuzk_device_info{device=\"0\",backend=\"%v\"", st.Devices[0].Backend)) {
		t.Fatalf("Prometheus() does not report the stages and the backend:\n%s", prom)
	}
}

func TestFreshRandomnessGivesOtherProofsThatVerify(t *testing.T) {
	e := newEngine(t, cuzk.Config{})
	srs := loadSRS(t)
	job, err := e.ProveStart(context.Background(), srs, fx.parts, cuzk.WithPriority(cuzk.PriorityWinningPoSt))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	proofs, err := job.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range proofs {
		if bytes.Equal(p[:], fx.expected(i)) {
			t.Fatalf("proof %d with OS randomness equals the fixed-randomness proof", i)
		}
		if ok, err := srs.Verify(p[:], fx.public[i]); err != nil || !ok {
			t.Fatalf("Verify(proof %d) = %v, %v", i, ok, err)
		}
	}
}

// The BLS12-381 scalar field modulus.
var modulusR, _ = new(big.Int).SetString("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16)

// montgomery rewrites canonical little-endian scalars as blstrs holds them in memory:
// x·2^256 mod r, as four little-endian u64 limbs (the same bytes, little-endian).
func montgomery(canonical []byte) []byte {
	out := make([]byte, len(canonical))
	for i := 0; i < len(canonical); i += 32 {
		be := make([]byte, 32)
		for j := 0; j < 32; j++ {
			be[31-j] = canonical[i+j]
		}
		x := new(big.Int).SetBytes(be)
		x.Lsh(x, 256).Mod(x, modulusR)
		x.FillBytes(be)
		for j := 0; j < 32; j++ {
			out[i+j] = be[31-j]
		}
	}
	return out
}

func TestMontgomeryInputsGiveTheSameProofs(t *testing.T) {
	e := newEngine(t, cuzk.Config{})
	srs := loadSRS(t)
	parts := make([]cuzk.Partition, fx.partitions)
	for i := range parts {
		parts[i] = fx.clone(i)
		p := &parts[i]
		p.A, p.B, p.C, p.Input, p.Aux = montgomery(p.A), montgomery(p.B), montgomery(p.C), montgomery(p.Input), montgomery(p.Aux)
	}
	job, err := e.ProveStart(context.Background(), srs, parts,
		cuzk.WithMontgomery(), cuzk.WithRandomness(montgomery(fx.r), montgomery(fx.s)))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	proofs, err := job.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkProofs(t, proofs)
	// The same Montgomery bytes read as canonical integers are other scalars (or not
	// below r): without the option the job must not produce the fixture's proofs.
	job2, err := e.ProveStart(context.Background(), srs, parts, cuzk.WithRandomness(fx.r, fx.s))
	if err == nil {
		defer job2.Close()
		other, err := job2.Finish(context.Background())
		if err == nil && bytes.Equal(other[0][:], fx.expected(0)) {
			t.Fatal("Montgomery bytes read as canonical gave the fixture's proof")
		}
	}
}

// Sixteen goroutines share one engine and one SRS, each proving the fixture several
// times while the others do; every proof must still be byte-identical.
func TestSixteenGoroutinesProveAtOnce(t *testing.T) {
	const goroutines, rounds = 16, 3
	e := newEngine(t, cuzk.Config{CPUDevices: 2})
	srs := loadSRS(t)
	prios := []cuzk.Priority{cuzk.PriorityWinningPoSt, cuzk.PriorityWindowPoSt, cuzk.PriorityPoRepSnap, cuzk.PriorityOther}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				job, err := e.ProveStart(context.Background(), srs, fx.parts,
					cuzk.WithRandomness(fx.r, fx.s), cuzk.WithPriority(prios[g%len(prios)]))
				if err != nil {
					errs <- fmt.Errorf("goroutine %d round %d: ProveStart: %w", g, r, err)
					return
				}
				proofs, err := job.Finish(context.Background())
				job.Close()
				if err != nil {
					errs <- fmt.Errorf("goroutine %d round %d: Finish: %w", g, r, err)
					return
				}
				for i := range proofs {
					if !bytes.Equal(proofs[i][:], fx.expected(i)) {
						errs <- fmt.Errorf("goroutine %d round %d: proof %d differs", g, r, i)
						return
					}
				}
				// Monitoring from the same goroutines while others prove.
				if _, err := e.Stats(); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.JobsFinished != goroutines*rounds || st.PartitionsProved != uint64(goroutines*rounds*fx.partitions) {
		t.Fatalf("stats: %d jobs finished, %d partitions proved", st.JobsFinished, st.PartitionsProved)
	}
	if len(st.Devices) != 2 {
		t.Fatalf("%d devices in stats, configured 2", len(st.Devices))
	}
	for i, d := range st.Devices {
		if d.Backend != cuzk.BackendCPU || d.GPUOrdinal != -1 || d.Backend.String() != "cpu" {
			t.Fatalf("device %d: backend %v, GPU ordinal %d; want cpu, -1", i, d.Backend, d.GPUOrdinal)
		}
		if d.KernelActive != 0 {
			t.Fatalf("device %d: %v of kernels on a CPU device", i, d.KernelActive)
		}
	}
	// One observation of each stage per start phase, inside the device mutex's holds; a
	// CPU device has no transfers.
	proved := st.PartitionsProved
	for _, stage := range st.Stages.All() {
		if l := stage.Latency; l.Count != proved || l.Sum > st.MutexHold.Sum+time.Millisecond {
			t.Fatalf("stage %s: %d observations, %v in all; want %d within the holds' %v",
				stage.Name, l.Count, l.Sum, proved, st.MutexHold.Sum)
		}
	}
	if st.Stages.MSMH.Sum <= 0 || st.Stages.HostToDevice.Sum != 0 || st.FinalizeBG2.Count != proved {
		t.Fatalf("stages on the CPU: %+v, B_g2 %+v", st.Stages, st.FinalizeBG2)
	}
}

// backlog is a job of many partitions (the fixture's, repeated) on an engine of one
// worker, so that most of it is still queued when the test cancels it.
func backlog(n int) []cuzk.Partition {
	parts := make([]cuzk.Partition, n)
	for i := range parts {
		parts[i] = fx.parts[i%fx.partitions]
	}
	return parts
}

// Every fault, deferral, recordings and trim field set: the engine starts and proves the
// fixture's bytes (the recordings folder stays empty: these partitions come synthesized).
// A start deadline runs each start phase on a thread of its own; no healthy one comes near
// a minute, so nothing hangs and nothing falls back.
func TestConfigFaultDeferralAndRecordingFields(t *testing.T) {
	for _, cfg := range []cuzk.Config{
		{CPUDevices: 1, FaultMaxAttempts: 1, FaultOutOfRotationAfter: 4, FaultProbeDelay: 50 * time.Millisecond,
			DeferEvaluations: cuzk.DeferOn, RecordingsDir: t.TempDir()},
		{CPUDevices: 1, FaultNeverOutOfRotation: true, FaultProbeDelay: cuzk.WaitForever, DeferEvaluations: cuzk.DeferOff},
		{CPUDevices: 2, FaultStartDeadline: time.Minute, CPUFallback: true},
		{CPUDevices: 1, FaultStartDeadline: cuzk.WaitForever, TrimArenaTops: true},
	} {
		e := newEngine(t, cfg)
		job, err := e.ProveStart(context.Background(), loadSRS(t), fx.parts, cuzk.WithRandomness(fx.r, fx.s))
		if err != nil {
			t.Fatalf("ProveStart on %+v: %v", cfg, err)
		}
		proofs, err := job.Finish(context.Background())
		job.Close()
		if err != nil {
			t.Fatalf("Finish on %+v: %v", cfg, err)
		}
		checkProofs(t, proofs)
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		var hangs uint64
		for _, d := range st.Devices {
			hangs += d.DeviceHangs
		}
		if hangs != 0 || st.CPUFallbacks != 0 {
			t.Fatalf("%+v: %d hangs, %d CPU fallbacks, want none", cfg, hangs, st.CPUFallbacks)
		}
	}
}

func oneWorker() cuzk.Config {
	return cuzk.Config{CPUDevices: 1, WorkersPerDevice: 1, Finalizers: 1}
}

func TestContextCancelCancelsTheJobAndTheEngineKeepsServing(t *testing.T) {
	const n = 400
	e := newEngine(t, oneWorker())
	srs := loadSRS(t)
	job, err := e.ProveStart(context.Background(), srs, backlog(n))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel once the job is under way, from another goroutine, while Finish waits.
	go func() {
		for {
			if _, proved, err := job.Poll(); err != nil || proved > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = job.Finish(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Fatalf("Finish after cancel: %v; want context.Canceled and ErrCancelled", err)
	}
	var ce *cuzk.Error
	if !errors.As(err, &ce) || ce.Status != cuzk.StatusCancelled {
		t.Fatalf("Finish after cancel: %v is not a *cuzk.Error of StatusCancelled", err)
	}
	if st, _, err := job.Poll(); err != nil || st != cuzk.JobCancelled {
		t.Fatalf("Poll after cancel = %v, %v", st, err)
	}
	if did, err := job.Cancel(); err != nil || did {
		t.Fatalf("Cancel of a cancelled job = %v, %v; want false, nil", did, err)
	}
	// The cancel ran in the context's AfterFunc goroutine, which wakes Finish before it
	// takes the job's partitions off the queue, and a partition on a device is dropped
	// when its step ends: wait until every partition is accounted for.
	var st cuzk.Stats
	settled := func() bool {
		return st.QueueDepth == [cuzk.PriorityClasses]uint64{} && st.PartitionsProved+st.PartitionsDropped == n
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if st, err = e.Stats(); err != nil {
			t.Fatal(err)
		}
		if settled() || time.Now().After(deadline) {
			break
		}
	}
	if !settled() || st.JobsCancelled != 1 || st.PartitionsDropped == 0 || st.MemoryReservedBytes != 0 {
		t.Fatalf("stats 10 s after cancel: %d cancelled, %d dropped + %d proved of %d, queue %v, %d bytes reserved",
			st.JobsCancelled, st.PartitionsDropped, st.PartitionsProved, n, st.QueueDepth, st.MemoryReservedBytes)
	}

	// The engine serves the next job as if nothing happened.
	next, err := e.ProveStart(context.Background(), srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	proofs, err := next.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkProofs(t, proofs)
}

func TestContextDeadlineCancelsTheJob(t *testing.T) {
	e := newEngine(t, oneWorker())
	srs := loadSRS(t)
	job, err := e.ProveStart(context.Background(), srs, backlog(400))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20e6) // 20 ms
	defer cancel()
	_, err = job.Finish(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Fatalf("Finish past the deadline: %v", err)
	}
	// A context already done starts nothing.
	if _, err := e.ProveStart(ctx, srs, fx.parts); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ProveStart with a done context: %v", err)
	}
}

func TestJobCloseCancelsAFinishInProgress(t *testing.T) {
	e := newEngine(t, oneWorker())
	srs := loadSRS(t)
	job, err := e.ProveStart(context.Background(), srs, backlog(400))
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		_, err := job.Finish(context.Background())
		res <- err
	}()
	for {
		if _, proved, err := job.Poll(); err != nil || proved > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	job.Close()
	if err := <-res; !errors.Is(err, cuzk.ErrCancelled) && !errors.Is(err, cuzk.ErrInvalidArgument) {
		t.Fatalf("Finish while the job was closed: %v", err)
	}
	if st, _ := e.Stats(); st.JobsCancelled != 1 {
		t.Fatalf("%d jobs cancelled, want 1", st.JobsCancelled)
	}
}

func TestEngineCloseEndsQueuedJobsAndLeavesHandlesUsable(t *testing.T) {
	e, err := cuzk.NewEngine(oneWorker())
	if err != nil {
		t.Fatal(err)
	}
	srs := loadSRS(t)
	job, err := e.ProveStart(context.Background(), srs, backlog(400))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	e.Close()
	_, err = job.Finish(context.Background())
	if !errors.Is(err, cuzk.ErrShuttingDown) {
		t.Fatalf("Finish of a job queued when its engine closed: %v", err)
	}
	// The SRS outlives the engine: a new engine proves with it.
	e2 := newEngine(t, cuzk.Config{})
	j2, err := e2.ProveStart(context.Background(), srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	proofs, err := j2.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkProofs(t, proofs)
}

func TestSRSClosedWhileItsJobRuns(t *testing.T) {
	e := newEngine(t, cuzk.Config{})
	srs, err := cuzk.SRSFromBytes(fx.params, false)
	if err != nil {
		t.Fatal(err)
	}
	job, err := e.ProveStart(context.Background(), srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	srs.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	proofs, err := job.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkProofs(t, proofs)
}

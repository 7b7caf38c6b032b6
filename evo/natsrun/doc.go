// Package natsrun trains a population on workers spread over many machines
// through NATS JetStream: Pool is an evo.Pool for the coordinator (the
// evolve process that owns the run), Worker is the loop of each `evolve
// worker` process. The generation loop — selection, mutation, checkpoints,
// metrics, resume — stays in evo.Trainer on the coordinator; only
// evo.TrainTask runs on workers, so a run gives the same files, bit for
// bit, whether its agents train here or there, with any number of workers.
//
// # What lives on the server
//
// All resources use file storage, so a restarted server loses nothing:
//
//	stream EVOLVE_TASKS     subjects evolve.tasks.<run>, work-queue retention,
//	                        one durable pull consumer "workers" (explicit
//	                        acks, AckWait, MaxDeliver) shared by all workers
//	stream EVOLVE_RESULTS   subjects evolve.results.<run>, work-queue
//	                        retention, one durable consumer per run (the
//	                        coordinator's)
//	KV EVOLVE_RUNS          key <run>: the run's config (TOML), its digest,
//	                        the coordinator's evolve version and session
//	object EVOLVE_AGENTS    agent files: <run>/<session>/g<gen>/a<index>/in
//	                        and .../out-<unique>
//
// <run> is 16 hex digits of the hash of the config's generations digest
// (which leaves out the stopping rules) and the run's key, drawn at random
// by its first coordinator and kept in the run directory's .nats-run, so
// a resumed coordinator finds its run again and two runs never share
// subjects (host name and directory, which named runs before, can be the
// same for two containers); <session> is new for every coordinator
// process.
//
// A run has one coordinator at a time: it answers requests on
// evolve.coordinator.<run> (core NATS) with its session, host, pid and
// run directory, and a coordinator that gets an answer there, or whose
// request is heard but not answered, refuses to start (evo.ErrRunInUse)
// before it touches the run's resources; it asks again once it answers
// itself, so that two started at once both refuse. Two
// copies of a run directory share its key, and the flock of a run
// directory sees neither a copy nor a directory shared by two machines.
//
// # Messages
//
// A task (JSON, header Nats-Msg-Id = task id) carries data only: the run,
// session, digest and evolve version it belongs to, the generation, the
// member's index, parent and mutation, the evaluation seed and the name of
// its agent file in the object store. Step counts and envs come from the
// run's config in the KV bucket; nothing in a task is code or a path a
// worker opens. A result (gob, so that NaN and ±Inf statistics cross
// exactly; header Nats-Msg-Id = task id) carries the task id, the worker's
// name and version, and either the evo.MemberReport and the name of the
// trained agent file, a training error, or a refusal.
//
// # Delivery
//
// A worker asks for one task per free slot, on a subscription that outlives
// its pull requests (a task the server sends is received however late it
// arrives, and one on its way as the worker stops is handed back), sends
// InProgress as it takes the task and every third of
// AckWait while it trains, stores the trained agent file, publishes the
// result and waits for the stream's acknowledgement, and only then acks
// the task (a double ack). A killed worker's task is redelivered after
// AckWait; a task delivered MaxDeliver times without an ack makes the
// server publish a max-deliveries advisory, which fails the run with an
// error naming the agent. The advisory is not stored: a generation that
// has heard nothing for a while also asks the server whether one of its
// tasks is still in the work queue while nothing of the queue is pending
// or in a worker's hands, and fails the run alike. Two workers that finish the same task publish
// the same task id, so within the stream's duplicate window (two minutes)
// it keeps one result; any result for a task
// that is no longer pending (a duplicate, or one from an earlier session)
// is acked and dropped by the coordinator, so each task is applied once;
// a redelivery of the result being applied is left unsettled, since an
// ack settles the stream message, not the delivery.
// Training is deterministic, so whichever copy wins carries the same
// bytes. A training error (bad env output, a panic) is a result too and
// fails the run; trouble reaching the server is not, and the task is
// redelivered.
//
// Coordinator and workers compare their evolve versions and the run's
// config digest on every task; a worker of another version refuses the
// task and tells the coordinator, which fails the run with a message that
// names both versions (ErrMismatch); the worker stops. A worker also refuses
// the tasks of a run on a "gym:" env unless its operator allowed that
// run's Python interpreter (Worker.GymPython, `evolve worker -gym-python`):
// the coordinator fails that run saying how to allow it (ErrRefused), and
// the worker goes on serving other runs.
package natsrun

package envs

import (
	"fmt"
	"math"
	"sync"

	"github.com/ByteArena/box2d"
)

// LunarLander constants of Gymnasium 1.x's lunar_lander.py (LunarLander-v3).
// Lengths in the lander's drawing are in pixels and divided by llScale to
// get Box2D metres, as Gymnasium does.
const (
	llFPS              = 50
	llScale            = 30.0 // pixels per metre
	llMainEnginePower  = 13.0
	llSideEnginePower  = 0.6
	llInitialRandom    = 1000.0 // bound of the random force on the lander at reset
	llLegAway          = 20
	llLegDown          = 18
	llLegW, llLegH     = 2, 8
	llLegSpringTorque  = 40
	llSideEngineHeight = 14.0
	llSideEngineAway   = 12.0
	llMainEngineY      = 4.0
	llViewportW        = 600
	llViewportH        = 400
	llChunks           = 11 // terrain points; the helipad spans the middle ones

	llVelocityIterations = 6 * 30
	llPositionIterations = 2 * 30
)

// llLanderPoly is the lander's hull in pixels.
var llLanderPoly = [...][2]float64{{-14, 17}, {-17, 0}, {-17, -10}, {17, -10}, {17, 0}, {14, 17}}

// LunarLanderParams are the keyword arguments of Gymnasium's LunarLander.
// Start from DefaultLunarLanderParams: several zero values are not the
// defaults.
type LunarLanderParams struct {
	// Continuous selects Box(-1, 1, [2]) actions instead of Discrete(4).
	Continuous bool
	// Gravity is the vertical gravity in m/s², in (-12, 0); Gymnasium's
	// default is -10.
	Gravity float64
	// EnableWind turns on a horizontal wind force and a turbulence torque
	// while neither leg touches the ground.
	EnableWind bool
	// WindPower is the largest wind force (default 15; Gymnasium recommends
	// 0 to 20).
	WindPower float64
	// TurbulencePower is the largest turbulence torque (default 1.5;
	// Gymnasium recommends 0 to 2).
	TurbulencePower float64
}

// DefaultLunarLanderParams returns Gymnasium's defaults: discrete actions,
// gravity −10, wind off (power 15, turbulence 1.5 when turned on).
func DefaultLunarLanderParams() LunarLanderParams {
	return LunarLanderParams{Gravity: -10, WindPower: 15, TurbulencePower: 1.5}
}

// Validate checks the parameters as Gymnasium's constructor asserts: the
// gravity must lie strictly between -12 and 0. Gymnasium only warns about
// wind and turbulence powers outside their recommended ranges, so any finite
// value is accepted for them.
func (p LunarLanderParams) Validate() error {
	if !(p.Gravity > -12 && p.Gravity < 0) {
		return fmt.Errorf("gravity = %v: want a value strictly between -12 and 0", p.Gravity)
	}
	if math.IsNaN(p.WindPower) || math.IsInf(p.WindPower, 0) {
		return fmt.Errorf("wind_power = %v: want a finite number", p.WindPower)
	}
	if math.IsNaN(p.TurbulencePower) || math.IsInf(p.TurbulencePower, 0) {
		return fmt.Errorf("turbulence_power = %v: want a finite number", p.TurbulencePower)
	}
	return nil
}

// LunarLander is Gymnasium's LunarLander-v3 (and, with Params.Continuous,
// LunarLanderContinuous-v3) without its time limit (Make adds the
// registered 1,000 steps), simulated with the Go port of Box2D.
//
// Task: land a lander on the pad at the origin, between two flags, from the
// top centre of the screen where it starts with a random push. The terrain
// is 11 random points smoothed by a 3-point average, flat across the pad.
//
// Observation, Box of 8 float32 as Gymnasium v3 bounds it: the lander's x
// relative to the screen's centre (the pad's) over half the screen width,
// its y relative to the pad's height plus the legs' 18 px over half the
// screen height (both ±2.5), the two velocities times those half sizes
// over the frame rate (±10), the angle in radians (±2π), the angular
// velocity times 20/FPS (±10), and 1 or 0 for each leg touching the
// ground. The screen is 20 m × 13.3 m; the lander starts near (0, 1.4).
//
// Actions, discrete: 0 nothing, 1 fire the left orientation engine, 2 the
// main engine, 3 the right orientation engine. Continuous, two values
// clipped to [−1, 1]: the main engine fires when a0 > 0 with throttle
// (a0+1)/2 (50 % to 100 %); the side engines fire when |a1| > 0.5 with
// throttle |a1|, the right one for a1 > 0, the left one for a1 < 0. Every
// engine impulse is dispersed at random, as in Gymnasium.
//
// Reward: the change of the shaping −100‖(x, y)‖ − 100‖(vx, vy)‖ −
// 100|angle| + 10 per leg on the ground between two steps, minus 0.3 per
// step of full main engine and 0.03 per step of full side engine (scaled by
// the throttle). A crash (the hull touches the ground) or leaving the screen
// (|x| ≥ 1) ends the episode (terminated) with reward −100 for that step;
// coming to rest (Box2D puts the lander to sleep) ends it with +100.
type LunarLander struct {
	p        LunarLanderParams
	obsSpace Box
	stream   stream

	world    box2d.B2World
	contacts llContactListener
	lander   *box2d.B2Body
	legs     [2]*box2d.B2Body

	// Contact state, written by the contact listener during world steps.
	gameOver   bool
	legContact [2]bool

	helipadY float64 // the pad's height; the observed y is measured from it

	windIdx, torqueIdx int
	prevShaping        float64
	hasPrevShaping     bool
	// mPower and sPower are the throttles of the last step's main and side
	// engines (0 when off), kept for tests and rendering; sDir is the side
	// engine's direction (−1 or +1, 0 when off).
	mPower, sPower, sDir float64

	obs [8]float32
}

// NewLunarLander returns a LunarLander with the given parameters, or an
// error naming the invalid one. Call Reset before Step.
func NewLunarLander(p LunarLanderParams) (*LunarLander, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	box2dOnce.Do(initBox2D)
	twoPi := float32(2 * math.Pi)
	space, err := NewBoxBounds(
		[]float32{-2.5, -2.5, -10, -10, -twoPi, -10, 0, 0},
		[]float32{2.5, 2.5, 10, 10, twoPi, 10, 1, 1})
	if err != nil {
		return nil, err
	}
	e := &LunarLander{p: p, obsSpace: space}
	e.contacts.env = e
	return e, nil
}

// Params returns the parameters the env was built with.
func (e *LunarLander) Params() LunarLanderParams { return e.p }

// ObservationSpace returns the Box described on the type.
func (e *LunarLander) ObservationSpace() Space { return e.obsSpace }

// ActionSpace returns Discrete(4), or Box(-1, 1, [2]) for the continuous
// variant.
func (e *LunarLander) ActionSpace() Space {
	if e.p.Continuous {
		return NewBox(-1, 1, 2)
	}
	return Discrete{N: 4}
}

// Reset builds a new world, terrain and lander and, as Gymnasium does,
// takes one step with the engines off and returns its observation. The
// random draws are Gymnasium's, from the same generator (the package's
// Seeding) and in
// the same order: 12 terrain heights, the two components of the initial
// force, the two wind phases (only with wind on), then the engine
// dispersion of the first step. A seed thus gives Gymnasium's terrain, push
// and wind; the flight itself differs a little, Box2D being another port.
// It is long because it follows Gymnasium's reset step by step, in the
// order of its random draws.
func (e *LunarLander) Reset(seed int64) ([]float32, Info) {
	rng := e.stream.resetNumPy(seed)

	// A fresh world every episode, as Gymnasium v3 does to fix its
	// non-determinism: nothing (broad-phase tree, contact order) carries
	// over from the previous episode.
	e.world = box2d.MakeB2World(box2d.MakeB2Vec2(0, e.p.Gravity))
	e.world.SetContactListener(&e.contacts)
	e.gameOver = false
	e.legContact = [2]bool{}
	e.hasPrevShaping = false

	const w, h = llViewportW / llScale, llViewportH / llScale

	// Terrain. Gymnasium draws CHUNKS+1 heights, flattens five of them to
	// the pad height and averages each point with its neighbours using the
	// factor 0.33 (not 1/3) and Python's index -1 for the first point (the
	// last height, which is otherwise unused): both quirks are kept, so the
	// pad lies at 0.99·helipadY. It spans x from chunk 4 to chunk 6 (8 m to
	// 12 m of the 20 m screen).
	var height [llChunks + 1]float64
	for i := range height {
		height[i] = rng.Uniform(0, h/2)
	}
	var chunkX, smoothY [llChunks]float64
	for i := range chunkX {
		chunkX[i] = w / (llChunks - 1) * float64(i)
	}
	e.helipadY = h / 4
	for i := llChunks/2 - 2; i <= llChunks/2+2; i++ {
		height[i] = e.helipadY
	}
	for i := range smoothY {
		prev := height[(i-1+len(height))%len(height)]
		smoothY[i] = 0.33 * (prev + height[i] + height[i+1])
	}

	bd := box2d.MakeB2BodyDef()
	moon := e.world.CreateBody(&bd)
	edge := box2d.MakeB2EdgeShape()
	edge.Set(box2d.MakeB2Vec2(0, 0), box2d.MakeB2Vec2(w, 0))
	fd := box2d.MakeB2FixtureDef()
	fd.Shape = &edge
	fd.Filter = box2d.MakeB2Filter() // the Go port leaves the def's filter zero
	moon.CreateFixtureFromDef(&fd)
	for i := 0; i < llChunks-1; i++ {
		edge := box2d.MakeB2EdgeShape()
		edge.Set(box2d.MakeB2Vec2(chunkX[i], smoothY[i]), box2d.MakeB2Vec2(chunkX[i+1], smoothY[i+1]))
		fd := box2d.MakeB2FixtureDef()
		fd.Shape = &edge
		fd.Density = 0
		fd.Friction = 0.1
		fd.Filter = box2d.MakeB2Filter()
		moon.CreateFixtureFromDef(&fd)
	}

	// Lander hull, colliding only with the ground (category 1).
	initialX, initialY := w/2, h
	bd = box2d.MakeB2BodyDef()
	bd.Type = box2d.B2BodyType.B2_dynamicBody
	bd.Position = box2d.MakeB2Vec2(initialX, initialY)
	e.lander = e.world.CreateBody(&bd)
	var verts [len(llLanderPoly)]box2d.B2Vec2
	for i, v := range llLanderPoly {
		verts[i] = box2d.MakeB2Vec2(v[0]/llScale, v[1]/llScale)
	}
	hull := box2d.MakeB2PolygonShape()
	hull.Set(verts[:], len(verts))
	fd = box2d.MakeB2FixtureDef()
	fd.Shape = &hull
	fd.Density = 5
	fd.Friction = 0.1
	fd.Restitution = 0
	fd.Filter = box2d.B2Filter{CategoryBits: 0x0010, MaskBits: 0x0001}
	e.lander.CreateFixtureFromDef(&fd)
	fx := rng.Uniform(-llInitialRandom, llInitialRandom)
	fy := rng.Uniform(-llInitialRandom, llInitialRandom)
	e.lander.ApplyForceToCenter(box2d.MakeB2Vec2(fx, fy), true)

	// Gymnasium v3 draws new wind phases every episode (NumPy's
	// integers(-9999, 9999) excludes the upper bound).
	if e.p.EnableWind {
		e.windIdx = int(rng.Integers(-9999, 9999))
		e.torqueIdx = int(rng.Integers(-9999, 9999))
	}

	// Legs, on revolute joints whose motors push them outwards against
	// their limits: a spring that gives on touchdown. Leg 0 (i = −1) starts
	// to the right of the hull. Each leg's anchor lies 18 px above the
	// hull's, so the first steps pull the legs down into place, as in
	// Gymnasium.
	for k, i := range [2]float64{-1, 1} {
		bd := box2d.MakeB2BodyDef()
		bd.Type = box2d.B2BodyType.B2_dynamicBody
		bd.Position = box2d.MakeB2Vec2(initialX-i*llLegAway/llScale, initialY)
		bd.Angle = i * 0.05
		leg := e.world.CreateBody(&bd)
		box := box2d.MakeB2PolygonShape()
		box.SetAsBox(llLegW/llScale, llLegH/llScale)
		fd := box2d.MakeB2FixtureDef()
		fd.Shape = &box
		fd.Density = 1
		fd.Restitution = 0
		fd.Filter = box2d.B2Filter{CategoryBits: 0x0020, MaskBits: 0x0001}
		leg.CreateFixtureFromDef(&fd)

		rjd := box2d.MakeB2RevoluteJointDef()
		rjd.BodyA, rjd.BodyB = e.lander, leg
		rjd.LocalAnchorA = box2d.MakeB2Vec2(0, 0)
		rjd.LocalAnchorB = box2d.MakeB2Vec2(i*llLegAway/llScale, llLegDown/llScale)
		rjd.EnableMotor = true
		rjd.EnableLimit = true
		rjd.MaxMotorTorque = llLegSpringTorque
		rjd.MotorSpeed = 0.3 * i // low enough not to jump back into the sky
		if i == -1 {
			rjd.LowerAngle, rjd.UpperAngle = 0.9-0.5, 0.9
		} else {
			rjd.LowerAngle, rjd.UpperAngle = -0.9, -0.9+0.5
		}
		e.world.CreateJoint(&rjd)
		e.legs[k] = leg
	}

	var noop [2]float32
	action := noop[:1]
	if e.p.Continuous {
		action = noop[:]
	}
	obs, _, _, _, _ := e.Step(action)
	return obs, Info{}
}

// Step fires the engines the action asks for, advances the world by 1/50 s
// and returns the observation, the reward and whether the episode ended;
// see the type's comment for the rules. Like Reset it follows Gymnasium's
// step in order (its engine dispersion draws included), hence its length.
func (e *LunarLander) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	if e.lander == nil {
		panic("envs: LunarLander: Step called before Reset")
	}
	var a0, a1 float64
	discrete := 0
	if e.p.Continuous {
		boxAction("LunarLanderContinuous", action, 2)
		// Gymnasium clips continuous actions instead of rejecting them.
		a0 = clip(float64(action[0]), -1, 1)
		a1 = clip(float64(action[1]), -1, 1)
	} else {
		discrete = discreteAction("LunarLander", action, 4)
	}
	rng := e.stream.resetNumPy(NoSeed)

	// Wind and turbulence: tanh(sin(0.02 t) + sin(0.01 π t)), never
	// periodic, applied only while the lander is airborne.
	if e.p.EnableWind && !e.legContact[0] && !e.legContact[1] {
		pi := math.Pi // a variable, so that π·0.01 is rounded as in Python
		t := float64(e.windIdx)
		wind := math.Tanh(math.Sin(0.02*t)+math.Sin(pi*0.01*t)) * e.p.WindPower
		e.windIdx++
		e.lander.ApplyForceToCenter(box2d.MakeB2Vec2(wind, 0), true)
		t = float64(e.torqueIdx)
		torque := math.Tanh(math.Sin(0.02*t)+math.Sin(pi*0.01*t)) * e.p.TurbulencePower
		e.torqueIdx++
		e.lander.ApplyTorque(torque, true)
	}

	pos := e.lander.GetPosition()
	tipX, tipY := math.Sincos(e.lander.GetAngle()) // tip = (sin, cos) of the angle
	sideX, sideY := -tipY, tipX
	// Gymnasium draws the dispersion every step, engines on or off.
	disp0 := rng.Uniform(-1, 1) / llScale
	disp1 := rng.Uniform(-1, 1) / llScale

	e.mPower = 0
	if (e.p.Continuous && a0 > 0) || (!e.p.Continuous && discrete == 2) {
		e.mPower = 1
		if e.p.Continuous {
			e.mPower = (clip(a0, 0, 1) + 1) * 0.5
		}
		// The exhaust leaves 4 px below the centre, shifted at random.
		ox := tipX*(llMainEngineY/llScale+2*disp0) + sideX*disp1
		oy := -tipY*(llMainEngineY/llScale+2*disp0) - sideY*disp1
		at := box2d.MakeB2Vec2(pos.X+ox, pos.Y+oy)
		k := llMainEnginePower * e.mPower
		e.lander.ApplyLinearImpulse(box2d.MakeB2Vec2(-ox*k, -oy*k), at, true)
	}

	e.sPower, e.sDir = 0, 0
	if (e.p.Continuous && math.Abs(a1) > 0.5) || (!e.p.Continuous && (discrete == 1 || discrete == 3)) {
		var direction float64
		if e.p.Continuous {
			direction = math.Copysign(1, a1)
			e.sPower = clip(math.Abs(a1), 0.5, 1)
		} else {
			direction = float64(discrete - 2)
			e.sPower = 1
		}
		e.sDir = direction
		ox := tipX*disp0 + sideX*(3*disp1+direction*llSideEngineAway/llScale)
		oy := -tipY*disp0 - sideY*(3*disp1+direction*llSideEngineAway/llScale)
		// Gymnasium offsets the point of application by 17 px along x but
		// SIDE_ENGINE_HEIGHT (14 px) along y, which makes the side
		// engines' torque depend on the lander's angle; kept on purpose.
		at := box2d.MakeB2Vec2(pos.X+ox-tipX*17/llScale, pos.Y+oy+tipY*llSideEngineHeight/llScale)
		k := llSideEnginePower * e.sPower
		e.lander.ApplyLinearImpulse(box2d.MakeB2Vec2(-ox*k, -oy*k), at, true)
	}

	e.stepWorld()

	pos = e.lander.GetPosition()
	vel := e.lander.GetLinearVelocity()
	const halfW, halfH = llViewportW / llScale / 2, llViewportH / llScale / 2
	var s [8]float64
	s[0] = (pos.X - halfW) / halfW
	s[1] = (pos.Y - (e.helipadY + llLegDown/llScale)) / halfH
	s[2] = vel.X * halfW / llFPS
	s[3] = vel.Y * halfH / llFPS
	s[4] = e.lander.GetAngle()
	s[5] = 20.0 * e.lander.GetAngularVelocity() / llFPS
	if e.legContact[0] {
		s[6] = 1
	}
	if e.legContact[1] {
		s[7] = 1
	}
	// Shaping from the float64 state, before the observation is rounded to
	// float32, as Gymnasium computes it.
	shaping := -100*math.Sqrt(s[0]*s[0]+s[1]*s[1]) -
		100*math.Sqrt(s[2]*s[2]+s[3]*s[3]) -
		100*math.Abs(s[4]) + 10*s[6] + 10*s[7]
	reward := 0.0
	if e.hasPrevShaping {
		reward = shaping - e.prevShaping
	}
	e.prevShaping, e.hasPrevShaping = shaping, true
	reward -= e.mPower * 0.30
	reward -= e.sPower * 0.03

	terminated := false
	if e.gameOver || math.Abs(s[0]) >= 1 {
		terminated = true
		reward = -100
	}
	// Checked second, as in Gymnasium: a lander at rest wins even on the
	// step its hull touched down.
	if !e.lander.IsAwake() {
		terminated = true
		reward = 100
	}
	return fill32(e.obs[:], s[:]...), reward, terminated, false, Info{}
}

// llContactListener mirrors Gymnasium's ContactDetector: any contact of the
// hull ends the game, and a leg's ground flag follows its contacts' begin
// and end events (so a leg leaving one of two touching terrain segments
// reads as airborne, a quirk kept from Gymnasium).
type llContactListener struct{ env *LunarLander }

func (c *llContactListener) BeginContact(contact box2d.B2ContactInterface) {
	a, b := contact.GetFixtureA().GetBody(), contact.GetFixtureB().GetBody()
	e := c.env
	if a == e.lander || b == e.lander {
		e.gameOver = true
	}
	for i, leg := range e.legs {
		if a == leg || b == leg {
			e.legContact[i] = true
		}
	}
}

func (c *llContactListener) EndContact(contact box2d.B2ContactInterface) {
	a, b := contact.GetFixtureA().GetBody(), contact.GetFixtureB().GetBody()
	for i, leg := range c.env.legs {
		if a == leg || b == leg {
			c.env.legContact[i] = false
		}
	}
}

func (c *llContactListener) PreSolve(box2d.B2ContactInterface, box2d.B2Manifold) {}

func (c *llContactListener) PostSolve(box2d.B2ContactInterface, *box2d.B2ContactImpulse) {}

// stepWorld advances the world by one frame with Gymnasium's iteration
// counts.
func (e *LunarLander) stepWorld() {
	if raceBuild {
		box2dStepMu.Lock()
		defer box2dStepMu.Unlock()
	}
	e.world.Step(1.0/llFPS, llVelocityIterations, llPositionIterations)
}

// box2dStepMu serialises world steps, in race-detector builds only. The Go
// port of Box2D counts calls and iterations of its distance and
// time-of-impact routines in package-level variables (b2_gjkCalls,
// B2_toiCalls, ...) without synchronisation. Nothing reads them back into
// the simulation, so envs stepping in parallel goroutines still compute
// exactly what they would alone; but the race detector reports every such
// write, which would bury real races in the rest of a program. Ordinary
// builds step in parallel.
var box2dStepMu sync.Mutex

// box2dOnce guards initBox2D. The Go port of Box2D fills its table of
// contact constructors lazily, without a lock, on the first contact any
// world creates; two envs stepping in different goroutines could race on
// it. Filling it once here, before any env exists, leaves the table
// read-only afterwards.
var box2dOnce sync.Once

// initBox2D makes the port build its contact table by asking it for one
// contact between two throw-away fixtures.
func initBox2D() {
	world := box2d.MakeB2World(box2d.MakeB2Vec2(0, 0))
	circle := box2d.MakeB2CircleShape()
	circle.M_radius = 1
	var fixtures [2]*box2d.B2Fixture
	for i := range fixtures {
		bd := box2d.MakeB2BodyDef()
		bd.Type = box2d.B2BodyType.B2_dynamicBody
		fd := box2d.MakeB2FixtureDef()
		fd.Shape = &circle
		fixtures[i] = world.CreateBody(&bd).CreateFixtureFromDef(&fd)
	}
	box2d.B2ContactFactory(fixtures[0], 0, fixtures[1], 0)
}

func init() {
	for _, continuous := range []bool{false, true} {
		id, summary := "LunarLander-v3", "land a lander on a pad, discrete engines (Gymnasium 1.x, Box2D)"
		if continuous {
			id, summary = "LunarLanderContinuous-v3", "land a lander on a pad, continuous throttles (Gymnasium 1.x, Box2D)"
		}
		mustRegister(Spec{ID: id, MaxEpisodeSteps: 1000,
			Summary: summary + "; options gravity, enable_wind, wind_power, turbulence_power",
			New: func(o Options) (Env, error) {
				return lunarLanderFromOptions(continuous, o)
			}})
	}
}

// lunarLanderFromOptions builds a LunarLander from Gymnasium's keyword
// arguments.
func lunarLanderFromOptions(continuous bool, o Options) (*LunarLander, error) {
	if err := o.Only("gravity", "enable_wind", "wind_power", "turbulence_power"); err != nil {
		return nil, err
	}
	p := DefaultLunarLanderParams()
	p.Continuous = continuous
	var err error
	if p.Gravity, err = o.Float("gravity", p.Gravity); err != nil {
		return nil, err
	}
	if p.EnableWind, err = o.Bool("enable_wind", p.EnableWind); err != nil {
		return nil, err
	}
	if p.WindPower, err = o.Float("wind_power", p.WindPower); err != nil {
		return nil, err
	}
	if p.TurbulencePower, err = o.Float("turbulence_power", p.TurbulencePower); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("option %w", err)
	}
	return NewLunarLander(p)
}

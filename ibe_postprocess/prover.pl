/*  Backward chaining with weak unification (NLProlog / Logic-Explainer style).

    The knowledge base arrives as data (facts, rules, predicate similarities) and is
    asserted into this module's dynamic predicates; it is never called as code, so no
    clause an explanation or an autoformalizer wrote can run a built-in.

    A goal unifies with a fact or a rule head whose predicate name is *similar*: the
    proof score is the product of the similarities used (t-norm), and a branch is
    pruned as soon as its score is no longer strictly above the threshold (Algorithm 1
    accepts a proof when "depth > threshold"; scores only fall as a branch grows) or
    drops below the best complete proof found so far (branch and bound; equal scores go
    on, so that the shorter of two equally good proofs wins). The query must be derived through at least one
    rule: a proof that matches the conclusion directly to the premise would not use
    the explanation at all. A rule is used at most once on a branch, the branch depth
    is bounded, and loading and search run under an inference limit and a wall-clock
    deadline, so recursive or oversized programs terminate.
*/
:- module(ibe_prover, [ibe_prove/9]).

:- dynamic ibe_fact/1, ibe_rule/3, ibe_sim/3.

%!  ibe_prove(+Facts, +Rules, +Query, +Sims, +Threshold, +MaxDepth,
%!            +MaxInferences, +Seconds, -Result) is det.
%
%   Facts: list of [Name, Args]; Rules: list of [Id, [Name, Args], [[Name, Args], ...]];
%   Query: [Name, Args]; Sims: list of [NameA, NameB, Similarity]. Args are strings,
%   variables start with an upper-case letter or '_'. Result is
%   [Score, RuleIds, Status, Steps]: the best proof (Score 0.0 and [] when none scores
%   strictly above the threshold), whether the search finished ("complete") or hit a bound
%   ("inference_limit", "time_limit"), and the proof's unifications in the order the search made
%   them (the query first): [Goal, Matched, Similarity, RuleId] with the two predicate names as
%   strings and RuleId 0 where the goal unified with a fact.
%   Loading the knowledge base runs under the same bounds as the search: the inference
%   limit and the deadline (set before loading), so no program costs more than its proof may.
ibe_prove(Facts, Rules, Query, Sims, Threshold, MaxDepth, MaxInferences, Seconds, Result) :-
    get_time(Now), Deadline is Now + Seconds,
    setup_call_cleanup(
        clear_kb,
        load_and_search(Facts, Rules, Query, Sims, Threshold, MaxDepth, MaxInferences, Deadline, Result),
        clear_kb).

load_and_search(Facts, Rules, Query, Sims, T, MaxDepth, MaxInferences, Deadline, Result) :-
    catch(call_with_inference_limit(load_kb(Facts, Rules, Sims, Deadline), MaxInferences, Loaded),
          ibe_time_limit, Loaded = time_limit),
    (   ( Loaded == ! ; Loaded == true )
    ->  search(Query, T, MaxDepth, MaxInferences, Deadline, Result)
    ;   status(Loaded, Status), Result = [0.0, [], Status, []]
    ).

load_kb(Facts, Rules, Sims, Deadline) :-
    forall(member(F, Facts), (check_time(Deadline), atom_term(F, A, _), assertz(ibe_fact(A)))),
    forall(member([Id, H, B], Rules), (check_time(Deadline), load_rule(Id, H, B))),
    forall(member([X, Y, S], Sims),
           ( check_time(Deadline), atom_string(XA, X), atom_string(YA, Y),
             assertz(ibe_sim(XA, YA, S)), assertz(ibe_sim(YA, XA, S)) )).

load_rule(Id, Head, Body) :-
    atom_term(Head, H, Vars0),
    foldl(body_atom, Body, BodyTerms, Vars0, _),
    assertz(ibe_rule(Id, H, BodyTerms)).

body_atom(Spec, Term, Vars0, Vars) :- atom_term(Spec, Term, Vars0, Vars).

clear_kb :-
    retractall(ibe_fact(_)), retractall(ibe_rule(_, _, _)), retractall(ibe_sim(_, _, _)).

% Build atom(Name, Args) from [Name, ArgStrings], sharing variables by name in a clause.
atom_term(Spec, Term, Vars) :- atom_term(Spec, Term, [], Vars).
atom_term([Name, Args], atom(N, Terms), Vars0, Vars) :-
    atom_string(N, Name),
    foldl(arg_term, Args, Terms, Vars0, Vars).

arg_term(Arg, Term, Vars0, Vars) :-
    atom_string(A, Arg),
    (   sub_atom(A, 0, 1, _, C), (char_type(C, upper) ; C == '_')
    ->  (   memberchk(A-Term, Vars0) -> Vars = Vars0 ; Vars = [A-Term|Vars0] )
    ;   Term = A, Vars = Vars0
    ).

search(QuerySpec, T, MaxDepth, MaxInferences, Deadline, [Score, Rules, Status, Steps]) :-
    atom_term(QuerySpec, Goal, _),
    nb_setval(ibe_best, none),
    catch(call_with_inference_limit(
              forall(use_rule(Goal, [], T, MaxDepth, Deadline, 1.0, S, Used, Found), record(S, Used, Found)),
              MaxInferences, Outcome),
          ibe_time_limit, Outcome = time_limit),
    status(Outcome, Status),
    nb_getval(ibe_best, Best),
    (   Best = best(Score, Rules, Trace) -> maplist(step_strings, Trace, Steps)
    ;   Score = 0.0, Rules = [], Steps = []
    ).

% Predicate names leave as strings: janus would read the atoms true, false and none as Python values.
step_strings(u(N, M, Sim, Id), [NS, MS, Sim, Id]) :- atom_string(N, NS), atom_string(M, MS).

status(inference_limit_exceeded, "inference_limit") :- !.
status(time_limit, "time_limit") :- !.
status(_, "complete").

record(S, Used, Trace) :-
    sort(Used, Rules),
    nb_getval(ibe_best, Best),
    (   Best == none -> Better = true
    ;   Best = best(BS, BR, _),
        length(Rules, N), length(BR, BN),
        ( S > BS -> Better = true ; S =:= BS, N < BN -> Better = true ; Better = false )
    ),
    (   Better == true -> nb_setval(ibe_best, best(S, Rules, Trace)) ; true ).

bound(S, T) :-
    S > T,
    nb_getval(ibe_best, Best),
    ( Best == none -> true ; Best = best(BS, _, _), S >= BS ).

check_time(Deadline) :-
    get_time(Now),
    ( Now > Deadline -> throw(ibe_time_limit) ; true ).

similarity(A, A, 1.0) :- !.
similarity(A, B, S) :- ibe_sim(A, B, S), !.
similarity(_, _, 0.0).

% Used: the rule ids of a proof; Trace: its unifications u(Goal, Matched, Similarity, RuleId or 0).
prove(atom(N, Args), _Path, T, _Max, _Deadline, S0, S, [], [u(N, F, Sim, 0)]) :-
    ibe_fact(atom(F, Args)),
    similarity(N, F, Sim),
    S is S0 * Sim,
    bound(S, T).
prove(Goal, Path, T, Max, Deadline, S0, S, Used, Trace) :-
    use_rule(Goal, Path, T, Max, Deadline, S0, S, Used, Trace).

use_rule(atom(N, Args), Path, T, Max, Deadline, S0, S, [Id|Used], [u(N, H, Sim, Id)|Trace]) :-
    length(Path, Depth), Depth < Max,
    check_time(Deadline),
    ibe_rule(Id, atom(H, Args), Body),
    \+ memberchk(Id, Path),
    similarity(N, H, Sim),
    S1 is S0 * Sim,
    bound(S1, T),
    prove_body(Body, [Id|Path], T, Max, Deadline, S1, S, Used, Trace).

prove_body([], _Path, _T, _Max, _Deadline, S, S, [], []).
prove_body([G|Gs], Path, T, Max, Deadline, S0, S, Used, Trace) :-
    prove(G, Path, T, Max, Deadline, S0, S1, U1, Trace1),
    prove_body(Gs, Path, T, Max, Deadline, S1, S, U2, Trace2),
    append(U1, U2, Used),
    append(Trace1, Trace2, Trace).

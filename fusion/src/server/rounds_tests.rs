//! The rounds of `input_required`: binding, sealing, single use, several questions in one
//! round, capabilities and answers checked.
use super::*;

fn rounds(ttl: Duration) -> Rounds {
    Rounds::new(Some(vec![7; 32]), ttl, Arc::default())
}

fn arguments(amount: u64) -> Map<String, Value> {
    json!({"invoice": "inv_1", "amount": amount})
        .as_object()
        .unwrap()
        .clone()
}

fn everything() -> ClientCapabilities {
    serde_json::from_value(json!({"elicitation": {}, "sampling": {}, "roots": {}})).unwrap()
}

/// The round of a call carrying `state` and `responses`, from a client declaring
/// `capabilities`.
async fn open(
    rounds: &Rounds,
    state: Option<&str>,
    responses: Value,
    bound: &[u8],
    capabilities: ClientCapabilities,
) -> Result<Arc<Round>, Stopped> {
    let mut round = rounds.open(state, bound).await?;
    round.responses = serde_json::from_value(responses).unwrap_or_default();
    round.capabilities = capabilities;
    Ok(Arc::new(round))
}

/// The round of a retry carrying `state` and a yes to `q0`, from a client declaring
/// everything.
async fn yes_with(rounds: &Rounds, state: &str, bound: &[u8]) -> Result<Arc<Round>, Stopped> {
    open(
        rounds,
        Some(state),
        json!({"q0": yes()}),
        bound,
        everything(),
    )
    .await
}

/// The state of a first round (no state, no answers) whose action asked one elicitation.
async fn first_state(rounds: &Rounds, bound: &[u8]) -> String {
    let round = open(rounds, None, json!({}), bound, everything()).await;
    let (_, input) = ask(rounds, &round.unwrap(), &[InputKind::Elicitation], bound).await;
    input.unwrap().request_state.unwrap()
}

fn form() -> Value {
    let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}});
    json!({"mode": "form", "message": "Refund?", "requestedSchema": schema})
}

fn yes() -> Value {
    json!({"action": "accept", "content": {"confirm": true}})
}

/// Asks the questions `kinds` together (as `tokio::join!` does, in one poll): the answers the
/// round had, and its answer once the action is stopped.
async fn ask(
    rounds: &Rounds,
    round: &Arc<Round>,
    kinds: &[InputKind],
    bound: &[u8],
) -> (
    Vec<Option<Option<Value>>>,
    Result<InputRequiredResult, ErrorData>,
) {
    let inputs = round.inputs();
    let mut answers = Vec::new();
    let mut waiting = Vec::new();
    for kind in kinds {
        let params = match kind {
            InputKind::Elicitation | InputKind::Confirmation => form(),
            InputKind::Sampling => json!({"messages": [], "maxTokens": 10}),
            InputKind::Roots => json!({}),
        };
        let mut asked = inputs(None, *kind, params);
        let waker = std::task::Waker::noop();
        match asked
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
        {
            std::task::Poll::Ready(answer) => answers.push(Some(answer)),
            std::task::Poll::Pending => {
                answers.push(None);
                waiting.push(asked);
            }
        }
    }
    if !waiting.is_empty() {
        round.asked().await;
    }
    (answers, rounds.input_required(round, bound))
}

fn refused_state(stopped: Result<Arc<Round>, Stopped>) {
    match stopped {
        Err(Stopped::Protocol(error)) => {
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert_eq!(error.data.unwrap()["code"], REQUEST_STATE_INVALID);
        }
        _ => panic!("the state is refused with -32602"),
    }
}

#[tokio::test]
async fn answers_come_back_in_order_and_only_for_the_call_and_caller_they_were_given_to() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("alice", "billing", &arguments(100));
    let first = open(&rounds, None, json!({}), &bound, everything()).await;
    let (_, input) = ask(&rounds, &first.unwrap(), &[InputKind::Elicitation], &bound).await;
    let input = input.unwrap();
    let state = input.request_state.unwrap();
    let asked = input.input_requests.unwrap();
    assert_eq!(asked.into_keys().collect::<Vec<_>>(), ["q0"]);

    // Another caller, another tool, other arguments, a forged state: one refusal.
    for other in [
        binding("bob", "billing", &arguments(100)),
        binding("alice", "ledger", &arguments(100)),
        binding("alice", "billing", &arguments(200)),
    ] {
        refused_state(yes_with(&rounds, &state, &other).await);
    }
    // The last character changed (to another one: a state ending in `A` stays forged).
    let last = if state.ends_with('A') { "B" } else { "A" };
    let forged = format!("{}{last}", &state[..state.len() - 1]);
    refused_state(yes_with(&rounds, &forged, &bound).await);

    // The second round answers the first question and asks the second.
    let second = yes_with(&rounds, &state, &bound);
    let second = second.await.unwrap();
    let kinds = [InputKind::Elicitation, InputKind::Elicitation];
    let (answers, input) = ask(&rounds, &second, &kinds, &bound).await;
    assert_eq!(answers, [Some(Some(yes())), None]);
    let input = input.unwrap();
    let state2 = input.request_state.unwrap();
    assert_ne!(state2, state, "a new state each round");
    let asked = input.input_requests.unwrap();
    assert_eq!(asked.into_keys().collect::<Vec<_>>(), ["q1"]);

    // Used once: the first state is refused from now on, the second carries both answers
    // (the first from the state, whatever the call says).
    let decline = json!({"q0": {"action": "decline"}, "q1": {"action": "decline"}});
    let third = open(
        &rounds,
        Some(&state2),
        decline.clone(),
        &bound,
        everything(),
    );
    let (answers, _) = ask(&rounds, &third.await.unwrap(), &kinds, &bound).await;
    assert_eq!(
        answers,
        [Some(Some(yes())), Some(Some(json!({"action": "decline"})))]
    );
    refused_state(open(&rounds, Some(&state), decline, &bound, everything()).await);
}

#[tokio::test]
async fn questions_asked_together_go_out_together_each_as_its_input_request() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("", "inputs", &Map::new());
    let round = open(&rounds, None, json!({}), &bound, everything())
        .await
        .unwrap();
    let kinds = [
        InputKind::Elicitation,
        InputKind::Sampling,
        InputKind::Roots,
    ];
    let (answers, input) = ask(&rounds, &round, &kinds, &bound).await;
    assert_eq!(answers, [None, None, None]);
    let requests = serde_json::to_value(input.unwrap().input_requests).unwrap();
    assert_eq!(requests["q0"]["method"], "elicitation/create");
    assert_eq!(requests["q0"]["params"]["message"], "Refund?");
    assert_eq!(requests["q1"]["method"], "sampling/createMessage");
    assert_eq!(requests["q2"]["method"], "roots/list");
}

#[tokio::test]
async fn answers_without_a_state_are_taken_extra_ones_ignored_and_missing_ones_asked() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("", "inputs", &Map::new());
    let responses = json!({"q0": yes(), "unknown": {"action": "accept"}});
    let round = open(&rounds, None, responses, &bound, everything())
        .await
        .unwrap();
    let kinds = [InputKind::Elicitation, InputKind::Elicitation];
    let (answers, input) = ask(&rounds, &round, &kinds, &bound).await;
    assert_eq!(answers, [Some(Some(yes())), None]);
    let input = input.unwrap();
    let asked = input.input_requests.unwrap();
    assert_eq!(asked.into_keys().collect::<Vec<_>>(), ["q1"]);
}

#[tokio::test]
async fn a_question_the_client_did_not_declare_falls_back_or_refuses_the_call() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("", "inputs", &Map::new());
    let sampling: ClientCapabilities = serde_json::from_value(json!({"sampling": {}})).unwrap();
    // An elicitation the client cannot show falls back at once; the sample is asked.
    let round = open(&rounds, None, json!({}), &bound, sampling)
        .await
        .unwrap();
    let kinds = [InputKind::Elicitation, InputKind::Sampling];
    let (answers, input) = ask(&rounds, &round, &kinds, &bound).await;
    assert_eq!(answers, [Some(None), None]);
    let requests = serde_json::to_value(input.unwrap().input_requests).unwrap();
    assert_eq!(requests.as_object().unwrap().len(), 1);
    assert_eq!(requests["q1"]["method"], "sampling/createMessage");

    // Roots, which the client did not declare: -32021 naming them, whatever else was asked.
    let sampling: ClientCapabilities = serde_json::from_value(json!({"sampling": {}})).unwrap();
    let round = open(&rounds, None, json!({}), &bound, sampling)
        .await
        .unwrap();
    let kinds = [InputKind::Sampling, InputKind::Roots];
    let (_, input) = ask(&rounds, &round, &kinds, &bound).await;
    let error = input.unwrap_err();
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.data.unwrap()["requiredCapabilities"],
        json!({"roots": {}})
    );
}

#[tokio::test]
async fn an_answer_that_is_not_its_questions_result_is_refused() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("", "inputs", &Map::new());
    for (kind, answer) in [
        (InputKind::Elicitation, json!(12345)),
        (InputKind::Elicitation, json!({"confirm": true})),
        (InputKind::Sampling, json!({"text": "Paris"})),
        (InputKind::Roots, json!({"roots": "file:///"})),
    ] {
        let responses = json!({"q0": answer});
        let round = open(&rounds, None, responses, &bound, everything())
            .await
            .unwrap();
        let (_, input) = ask(&rounds, &round, &[kind], &bound).await;
        let error = input.unwrap_err();
        assert_eq!(
            error.code,
            rmcp::model::ErrorCode::INVALID_PARAMS,
            "{kind:?}"
        );
        assert!(
            error.message.contains("inputResponses[\"q0\"]"),
            "{}",
            error.message
        );
    }
}

#[tokio::test]
async fn an_expired_state_or_one_sealed_with_another_key_is_refused() {
    let bound = binding("", "billing", &arguments(1));
    let short = rounds(Duration::from_millis(1));
    let state = first_state(&short, &bound).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    refused_state(yes_with(&short, &state, &bound).await);

    let long = rounds(DEFAULT_REQUEST_STATE_TTL);
    let state = first_state(&long, &bound).await;
    let other_key = Rounds::new(Some(vec![8; 32]), DEFAULT_REQUEST_STATE_TTL, Arc::default());
    refused_state(yes_with(&other_key, &state, &bound).await);
}

#[tokio::test]
async fn a_state_whose_answer_was_never_read_is_given_back_and_a_read_one_is_spent() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("alice", "billing", &arguments(100));
    let state = first_state(&rounds, &bound).await;

    // A guard refused the retry before the action ran: the answer was never read.
    let refused = yes_with(&rounds, &state, &bound);
    rounds.give_back(&refused.await.unwrap()).await;
    // So the same state goes through on the next retry, and its answer is read this time.
    let retried = yes_with(&rounds, &state, &bound);
    let retried = retried.await.unwrap();
    let (answers, _) = ask(&rounds, &retried, &[InputKind::Elicitation], &bound).await;
    assert_eq!(answers, [Some(Some(yes()))]);
    rounds.give_back(&retried).await;
    // Spent: read by the action, never given back.
    refused_state(yes_with(&rounds, &state, &bound).await);
}

#[tokio::test]
async fn a_confirmations_yes_counts_only_with_the_state_of_the_round_that_asked_it() {
    let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
    let bound = binding("alice", "billing", &arguments(100));
    let confirm = [InputKind::Confirmation];
    // A yes sent ahead, without a state: not taken; the user is asked.
    let ahead = open(&rounds, None, json!({"q0": yes()}), &bound, everything());
    let (answers, input) = ask(&rounds, &ahead.await.unwrap(), &confirm, &bound).await;
    assert_eq!(answers, [None]);
    let state = input.unwrap().request_state.unwrap();
    // With the state of the round that asked it: taken.
    let answered = yes_with(&rounds, &state, &bound);
    let (answers, _) = ask(&rounds, &answered.await.unwrap(), &confirm, &bound).await;
    assert_eq!(answers, [Some(Some(yes()))]);

    // A state whose round asked a value (q0), carrying a yes to a confirmation it never asked
    // (q1): the value is taken, the confirmation is asked.
    let state = first_state(&rounds, &bound).await;
    let both = json!({"q0": yes(), "q1": yes()});
    let second = open(&rounds, Some(&state), both, &bound, everything());
    let kinds = [InputKind::Elicitation, InputKind::Confirmation];
    let (answers, input) = ask(&rounds, &second.await.unwrap(), &kinds, &bound).await;
    assert_eq!(answers, [Some(Some(yes())), None]);
    let asked = input.unwrap().input_requests.unwrap();
    assert_eq!(asked.into_keys().collect::<Vec<_>>(), ["q1"]);
}

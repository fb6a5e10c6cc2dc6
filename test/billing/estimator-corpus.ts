import { readFileSync } from 'node:fs'

/**
 * Text the token estimate is measured on, one entry per sample, grouped by the class of text it
 * stands for. Prose in English, German and other languages, code in several languages, JSON and
 * mixed text are written by hand to read like what clients send; the high-entropy classes
 * (base64, hex, random keys, rare characters, emoji soup) come from a seeded generator, so every
 * run measures the same strings and a failure can be reproduced. Short strings (single words,
 * a lone emoji or number) are their own class: on them one token either way is a large ratio.
 */

export type TextClass = 'english' | 'german' | 'latin' | 'code' | 'json' | 'base64' | 'hex' | 'random' | 'cjk' | 'emoji' | 'scripts' | 'mixed' | 'short'

export interface Sample {
  textClass: TextClass
  name: string
  text: string
}

/** A small deterministic generator (xorshift32): the same seed always gives the same strings. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state / 0x1_0000_0000
  }
}

function oneOf<Item>(random: () => number, items: readonly Item[]): Item {
  const item = items[Math.floor(random() * items.length)]
  if (item === undefined) throw new Error('nothing to choose from')
  return item
}

function randomString(random: () => number, alphabet: string, length: number): string {
  const characters = [...alphabet]
  let text = ''
  for (let index = 0; index < length; index++) text += oneOf(random, characters)
  return text
}

function randomBytes(random: () => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => Math.floor(random() * 256))
}

function randomCodePoints(random: () => number, ranges: [number, number][], length: number): string {
  let text = ''
  for (let index = 0; index < length; index++) {
    const [low, high] = oneOf(random, ranges)
    text += String.fromCodePoint(low + Math.floor(random() * (high - low + 1)))
  }
  return text
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz'
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const DIGITS = '0123456789'
const ALPHANUMERIC = LOWER + UPPER + DIGITS
const PRINTABLE = Array.from({ length: 95 }, (_, index) => String.fromCharCode(32 + index)).join('')

const english: Record<string, string> = {
  'release notes': `Release notes for version 3.4

This release focuses on reliability under load. The connection pool now recycles idle sockets after
ninety seconds instead of holding them open until the server closes them, which removes the burst of
reset errors some of you reported after long quiet periods. Retries are also smarter: a request that
failed before any byte reached the upstream is retried immediately on a different connection, while a
request that may have been partially processed is never retried automatically, because doing so could
charge a customer twice.

We changed how timeouts are reported. Previously a slow upstream produced a generic 500 response with
no explanation; it now produces a 504 with a short message naming the stage that timed out (connecting,
waiting for the first byte, or reading the body). If you parse error messages, please switch to the
error codes, which are stable, rather than the human-readable text, which is not.

Finally, the administration console got a small redesign. Tables remember their sort order, the search
box accepts partial email addresses, and exporting a month of usage no longer freezes the page when the
account has more than a few thousand requests. Thanks to everyone who filed detailed bug reports; they
made this release possible.`,
  story: `The lighthouse keeper had not spoken to anyone in eleven days when the boat finally appeared on the
horizon. She watched it through the salt-streaked window for nearly an hour, unsure whether it was
coming toward the island or merely passing by, the way the cargo ships did every Tuesday and Friday.
When it turned, slowly and deliberately, she put down her tea and went to find her coat.

The man who climbed onto the jetty was younger than she had expected, and he carried nothing but a
canvas bag and a folded letter. "They said you'd want to read this yourself," he told her, holding it
out as though it might bite. She recognised the handwriting at once. It was her brother's, cramped and
slanting to the left, exactly as it had been forty years earlier when he wrote to her from the mountains.

She did not open it on the jetty. She invited the stranger in, boiled more water, and only when they
were both sitting by the stove, listening to the wind worry at the shutters, did she slide her thumb
under the flap and begin to read.`,
  email: `Hi Priya,

Thanks for sending over the draft agreement so quickly. I've gone through it with our finance team and
we're happy with most of it, but there are three points we'd like to discuss before signing:

1. Section 4.2 says invoices are due within 15 days. Our standard terms are 30 days, and our accounts
   payable process can't realistically turn things around faster than that.
2. The liability cap in section 9 seems low given the size of the contract. Could we raise it to twelve
   months of fees rather than three?
3. We'd like the option to terminate for convenience with 60 days' notice after the first year.

None of these should be controversial, I hope. Would Thursday at 2:30 pm work for a quick call? If not,
I'm free most of Friday morning.

Best regards,
Daniel`,
  'support chat': `I've been trying to upgrade my plan for the last twenty minutes and it keeps failing. I click "Upgrade",
enter my card details, and then the page just spins. After about a minute it says "Something went wrong"
and sends me back to the pricing page. I tried two different browsers (Chrome and Firefox), turned off my
ad blocker, and even used a different card, but nothing changed. My account email is the one I'm writing
from. Can you check whether the payment actually went through? I don't want to be charged twice. Also,
is there a way to upgrade without losing the usage I've already got this month? Thanks!`,
  recipe: `Preheat the oven to 200 degrees. While it heats, toss the chopped vegetables with olive oil, a generous pinch of salt and
some freshly ground black pepper. Spread them out on a large baking tray in a single layer; if they overlap, they will steam
instead of roasting, and you will miss the caramelised edges that make this dish worth the effort. Roast for about thirty-five
minutes, turning once halfway through, until everything is tender and browned in places. Meanwhile, whisk together the yoghurt,
lemon juice, crushed garlic and chopped herbs. Serve the vegetables warm with the sauce spooned over the top.`,
  legal: `Notwithstanding anything to the contrary in this Agreement, neither party shall be liable for any indirect, incidental,
special, consequential or punitive damages, including without limitation loss of profits, revenue, data or business opportunities,
arising out of or relating to this Agreement, whether in contract, tort (including negligence) or otherwise, even if advised of the
possibility of such damages. The foregoing limitation shall not apply to breaches of confidentiality obligations, indemnification
obligations, or a party's gross negligence or wilful misconduct.`,
  chat: `honestly i'm not sure it's worth it?? like we tried the new onboarding flow last sprint and conversion went UP by maybe 2%
but support tickets doubled lol. idk. maybe we just revert and try the A/B test properly next quarter w/ a bigger sample.
@sam can u pull the numbers from the dashboard before standup tmrw? thx!!`,
  encyclopedia: `Photosynthesis is the process by which green plants, algae and some bacteria convert light energy into
chemical energy. During the light-dependent reactions, which take place in the thylakoid membranes of
the chloroplast, water molecules are split, releasing oxygen as a by-product and producing ATP and
NADPH. These energy carriers then power the Calvin cycle in the stroma, where carbon dioxide from the
atmosphere is fixed into three-carbon sugars. Although the overall equation is often written simply as
six molecules of carbon dioxide and six of water yielding one molecule of glucose and six of oxygen, the
actual biochemistry involves dozens of intermediate steps and several tightly regulated enzymes, the
most abundant of which, ribulose-1,5-bisphosphate carboxylase/oxygenase (RuBisCO), is thought to be the
most common protein on Earth. Variations such as C4 and CAM photosynthesis evolved independently in
hot, dry environments, allowing plants to conserve water by concentrating carbon dioxide before fixing it.`,
}

const german: Record<string, string> = {
  'insurance letter': `Sehr geehrte Damen und Herren,

mit Bezug auf Ihr Schreiben vom 14. März teile ich Ihnen mit, dass ich die Kündigung meiner
Kraftfahrzeughaftpflichtversicherung zum Ende des Versicherungsjahres wünsche. Gleichzeitig bitte ich um
eine schriftliche Bestätigung der Vertragsbeendigung sowie um eine Aufstellung der bereits geleisteten
Beitragszahlungen. Da meine Rechtsschutzversicherung bei einer anderen der großen
Rechtsschutzversicherungsgesellschaften abgeschlossen wurde, ist diese von der Kündigung nicht betroffen.

Bezüglich des Schadensfalls vom vergangenen Herbst liegt Ihnen die Arbeitsunfähigkeitsbescheinigung
meines Hausarztes bereits vor. Die Schadensersatzforderung des Unfallgegners halte ich weiterhin für
unbegründet; die Beweisaufnahme im Rahmen der Ermittlungsverfahrens hat ergeben, dass die
Geschwindigkeitsbegrenzung von beiden Verkehrsteilnehmern eingehalten wurde. Sollten Sie dennoch eine
Selbstbeteiligung einbehalten wollen, bitte ich um eine nachvollziehbare Begründung.

Mit freundlichen Grüßen
Johanna Überbacher`,
  'river story': `Der alte Donaudampfschifffahrtsgesellschaftskapitän stand an der Reling und blickte auf das graue
Wasser, das sich träge an der Bordwand vorbeischob. Seit über dreißig Jahren fuhr er diese Strecke,
von Passau bis hinunter nach Wien, und noch immer kannte er jede Sandbank, jede Untiefe und jeden
Leuchtturm beim Namen. Die jungen Matrosen lachten manchmal über seine Gewohnheiten: Er trank seinen
Kaffee nur schwarz, er sprach mit den Möwen, und er weigerte sich beharrlich, das neue
Satellitennavigationssystem zu benutzen, das die Reederei im vergangenen Frühjahr hatte einbauen lassen.

An diesem Morgen jedoch war etwas anders. Über dem Fluss lag ein dichter Nebel, und die Sicht reichte
kaum bis zum Bug. Der Kapitän ließ die Maschinen drosseln, schickte einen Mann mit dem Nebelhorn nach
vorn und stellte sich selbst ans Steuerrad. Niemand sagte ein Wort. Nur das gleichmäßige Stampfen der
Dampfmaschine und das leise Plätschern der Wellen waren zu hören.`,
  'technical docs': `Installation und Inbetriebnahme

Bevor Sie den Dienst starten, prüfen Sie bitte, ob die Konfigurationsdatei vollständig ist. Fehlende
Pflichtfelder führen beim Start zu einer Fehlermeldung, die den Namen des betroffenen Feldes enthält.
Die Datenbankverbindungszeichenfolge muss auf eine erreichbare PostgreSQL-Instanz zeigen; alternativ
kann für Testumgebungen eine eingebettete Datenbank verwendet werden.

Die Zugriffsberechtigungsverwaltung unterscheidet zwischen Administratoren, Betreibern und gewöhnlichen
Benutzern. Administratoren dürfen Guthaben aufladen, Schlüssel widerrufen und Preisänderungen vornehmen.
Betreiber sehen die Auslastungsstatistiken und die Protokolle, können aber keine Abrechnungsdaten
verändern. Jede Änderung wird mit Zeitstempel, Benutzerkennung und Begründung im Prüfprotokoll
festgehalten, sodass sich die Ursache einer Unstimmigkeit auch nach Monaten noch nachvollziehen lässt.`,
  news: `Berlin. Die Bundesregierung hat am Mittwoch einen Gesetzentwurf zur Beschleunigung der
Genehmigungsverfahren für Windkraftanlagen beschlossen. Künftig sollen Umweltverträglichkeitsprüfungen
in ausgewiesenen Vorranggebieten entfallen können, wenn bereits eine strategische Umweltprüfung für
die Regionalplanung durchgeführt wurde. Kommunale Spitzenverbände begrüßten den Vorstoß grundsätzlich,
warnten aber vor einer Überlastung der Verwaltungsgerichte durch Klagen von Anwohnerinitiativen.

Die Grundstücksverkehrsgenehmigungszuständigkeitsübertragungsverordnung, die in Mecklenburg-Vorpommern
lange als längstes deutsches Wort galt, wurde übrigens bereits 2013 aufgehoben. Ähnlich lange
Wortungetüme entstehen im Deutschen aber weiterhin täglich, etwa Energieeffizienzsteigerungsmaßnahmen
oder Mindestlohndokumentationspflichtenverordnung.`,
  kochen: `Für den Sonntagsbraten nehme ich am liebsten ein Stück aus der Rinderschulter, das ich schon am Vorabend mit Salz,
Pfeffer und etwas Senf einreibe. Am nächsten Morgen schneide ich Zwiebeln, Karotten und Sellerie in grobe Würfel und brate
das Fleisch in einem schweren Schmortopf von allen Seiten kräftig an. Danach kommt das Gemüse dazu, ein Esslöffel Tomatenmark
und ein großzügiger Schuss Rotwein. Der Braten schmort dann bei niedriger Temperatur gut drei Stunden im Backofen, bis sich
das Fleisch mit der Gabel zerteilen lässt. Die Soße wird am Ende durch ein Sieb gestrichen und mit kalter Butter gebunden.
Dazu gibt es Kartoffelklöße, Rotkohl und, wenn die Schwiegermutter zu Besuch kommt, auch noch Preiselbeeren.`,
  reise: `Unsere Wanderung begann in einem kleinen Bergdorf, dessen Kirchturm man schon von weitem sehen konnte. Der Weg führte
zunächst durch einen dichten Fichtenwald, später über blühende Almwiesen, auf denen Kühe mit schweren Glocken grasten. Gegen
Mittag erreichten wir die Hütte, wo es Kaiserschmarrn mit Zwetschgenröster und frische Buttermilch gab. Der Hüttenwirt erzählte
uns, dass im vergangenen Winter ein Lawinenabgang die Materialseilbahn beschädigt hatte und die Versorgung wochenlang nur per
Hubschrauber möglich gewesen sei. Am Nachmittag zogen dunkle Gewitterwolken auf, und wir beeilten uns mit dem Abstieg.`,
  software: `Mit dieser Version haben wir die Benutzeroberfläche vollständig überarbeitet. Die Einstellungen sind jetzt in
übersichtliche Kategorien gegliedert, und die Suchfunktion berücksichtigt auch Synonyme und Tippfehler. Außerdem wurde die
Synchronisierung zwischen mehreren Endgeräten beschleunigt: Änderungen erscheinen in der Regel innerhalb weniger Sekunden auf
allen angemeldeten Geräten. Bekannte Einschränkungen: Die Datenschutzeinstellungen müssen nach der Aktualisierung einmalig neu
bestätigt werden, und ältere Sicherungskopien lassen sich nur mit der Wiederherstellungsfunktion der Vorgängerversion einlesen.`,
  recht: `Der Mieter ist verpflichtet, die Schönheitsreparaturen während der Mietzeit fachgerecht auszuführen, sofern die
Wohnung bei Vertragsbeginn renoviert übergeben wurde. Betriebskostenabrechnungen sind spätestens zwölf Monate nach Ende des
Abrechnungszeitraums vorzulegen; Nachforderungen nach Ablauf dieser Frist sind ausgeschlossen. Die Untervermietung einzelner
Räume bedarf der vorherigen schriftlichen Zustimmung des Vermieters, die nur aus wichtigem Grund verweigert werden darf.
Haftpflichtversicherungsnachweise und Wohnungsübergabeprotokolle sind dem Vertrag als Anlage beigefügt.`,
}

const code: Record<string, string> = {
  typescript: `import { createHash } from 'node:crypto'

export interface RateLimitedRequestDescriptor {
  accountIdentifier: string
  requestedModelName: string
  estimatedInputTokenCount: number
  maximumOutputTokenCount?: number
}

/** Remembers how much each account spent in the current window so bursts can be refused early. */
export class SlidingWindowSpendTracker {
  private readonly spendByAccountIdentifier = new Map<string, number[]>()

  constructor(private readonly windowLengthInMilliseconds = 60_000) {}

  recordSpend(descriptor: RateLimitedRequestDescriptor, creditsSpent: number, now = Date.now()): void {
    const previousEntries = this.spendByAccountIdentifier.get(descriptor.accountIdentifier) ?? []
    const stillInsideWindow = previousEntries.filter((timestamp) => now - timestamp < this.windowLengthInMilliseconds)
    for (let index = 0; index < creditsSpent; index++) stillInsideWindow.push(now)
    this.spendByAccountIdentifier.set(descriptor.accountIdentifier, stillInsideWindow)
  }

  totalSpendInsideWindow(accountIdentifier: string, now = Date.now()): number {
    const entries = this.spendByAccountIdentifier.get(accountIdentifier) ?? []
    return entries.filter((timestamp) => now - timestamp < this.windowLengthInMilliseconds).length
  }
}

export const fingerprintOfRequestBody = (body: unknown): string =>
  createHash('sha256').update(JSON.stringify(body ?? null)).digest('hex').slice(0, 16)

export async function retryWithExponentialBackoff<ResultType>(
  operationToRetry: () => Promise<ResultType>,
  maximumAttemptCount = 5,
): Promise<ResultType> {
  let lastObservedError: unknown
  for (let attemptNumber = 0; attemptNumber < maximumAttemptCount; attemptNumber++) {
    try {
      return await operationToRetry()
    } catch (caughtError) {
      lastObservedError = caughtError
      await new Promise((resolve) => setTimeout(resolve, 2 ** attemptNumber * 100))
    }
  }
  throw lastObservedError
}
`,
  python: `from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from typing import Iterable

LOGGER = logging.getLogger(__name__)
DEFAULT_MAXIMUM_RETRY_ATTEMPTS = 3


@dataclasses.dataclass(frozen=True)
class InvoiceLineItem:
    customer_account_identifier: str
    product_catalogue_reference: str
    quantity_in_smallest_unit: int
    unit_price_in_micro_credits: int

    @property
    def total_price_in_micro_credits(self) -> int:
        return self.quantity_in_smallest_unit * self.unit_price_in_micro_credits


def group_line_items_by_customer(line_items: Iterable[InvoiceLineItem]) -> dict[str, list[InvoiceLineItem]]:
    grouped_line_items: dict[str, list[InvoiceLineItem]] = defaultdict(list)
    for line_item in line_items:
        grouped_line_items[line_item.customer_account_identifier].append(line_item)
    return dict(grouped_line_items)


def calculate_monthly_invoice_totals(line_items: Iterable[InvoiceLineItem]) -> dict[str, int]:
    """Sum every customer's line items; an empty month yields an empty mapping, not zeros."""
    invoice_totals_by_customer = {}
    for customer_identifier, customer_line_items in group_line_items_by_customer(line_items).items():
        invoice_totals_by_customer[customer_identifier] = sum(
            item.total_price_in_micro_credits for item in customer_line_items
        )
        LOGGER.debug("customer %s owes %d micro-credits", customer_identifier, invoice_totals_by_customer[customer_identifier])
    return invoice_totals_by_customer


if __name__ == "__main__":
    example_items = [
        InvoiceLineItem("acct_0001", "gpt-large-input", 125_000, 3),
        InvoiceLineItem("acct_0001", "gpt-large-output", 40_000, 12),
        InvoiceLineItem("acct_0002", "embedding-small", 2_000_000, 1),
    ]
    print(calculate_monthly_invoice_totals(example_items))
`,
  go: `package scheduler

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrQueueIsAlreadyClosed is returned when work is submitted after Shutdown.
var ErrQueueIsAlreadyClosed = errors.New("scheduler: queue is already closed")

type BoundedWorkQueue struct {
	mutex           sync.Mutex
	pendingJobs     []func(context.Context) error
	isShuttingDown  bool
	maximumPending  int
	workerWaitGroup sync.WaitGroup
}

func NewBoundedWorkQueue(maximumPending int, workerCount int) *BoundedWorkQueue {
	queue := &BoundedWorkQueue{maximumPending: maximumPending}
	for workerIndex := 0; workerIndex < workerCount; workerIndex++ {
		queue.workerWaitGroup.Add(1)
		go queue.runWorkerLoop()
	}
	return queue
}

func (queue *BoundedWorkQueue) Submit(job func(context.Context) error) error {
	queue.mutex.Lock()
	defer queue.mutex.Unlock()
	if queue.isShuttingDown {
		return ErrQueueIsAlreadyClosed
	}
	if len(queue.pendingJobs) >= queue.maximumPending {
		return errors.New("scheduler: too many pending jobs")
	}
	queue.pendingJobs = append(queue.pendingJobs, job)
	return nil
}

func (queue *BoundedWorkQueue) runWorkerLoop() {
	defer queue.workerWaitGroup.Done()
	for {
		queue.mutex.Lock()
		if len(queue.pendingJobs) == 0 {
			closed := queue.isShuttingDown
			queue.mutex.Unlock()
			if closed {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		nextJob := queue.pendingJobs[0]
		queue.pendingJobs = queue.pendingJobs[1:]
		queue.mutex.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = nextJob(ctx)
		cancel()
	}
}
`,
  rust: `use std::collections::HashMap;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerEntryKind {
    Deposit { reference_code: String },
    Withdrawal { destination_account_number: u64 },
    InternalTransfer,
}

#[derive(Debug)]
pub struct InsufficientBalanceError {
    pub requested_amount_in_cents: i64,
    pub available_amount_in_cents: i64,
}

impl fmt::Display for InsufficientBalanceError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "requested {} cents but only {} are available",
            self.requested_amount_in_cents, self.available_amount_in_cents
        )
    }
}

pub struct AccountBalanceRegistry {
    balances_by_account_identifier: HashMap<String, i64>,
}

impl AccountBalanceRegistry {
    pub fn new() -> Self {
        Self { balances_by_account_identifier: HashMap::new() }
    }

    pub fn withdraw_from_account(
        &mut self,
        account_identifier: &str,
        amount_in_cents: i64,
    ) -> Result<i64, InsufficientBalanceError> {
        let current_balance = self.balances_by_account_identifier.entry(account_identifier.to_owned()).or_insert(0);
        if *current_balance < amount_in_cents {
            return Err(InsufficientBalanceError {
                requested_amount_in_cents: amount_in_cents,
                available_amount_in_cents: *current_balance,
            });
        }
        *current_balance -= amount_in_cents;
        Ok(*current_balance)
    }
}
`,
  java: `package com.example.inventory.service;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

public final class WarehouseInventoryReservationService {
    private static final int MAXIMUM_RESERVATION_DURATION_IN_MINUTES = 15;
    private final ConcurrentHashMap<String, StockKeepingUnitReservation> activeReservationsByOrderNumber =
        new ConcurrentHashMap<>();
    private final InventoryRepository inventoryRepository;

    public WarehouseInventoryReservationService(InventoryRepository inventoryRepository) {
        this.inventoryRepository = inventoryRepository;
    }

    public Optional<StockKeepingUnitReservation> reserveStockForOrder(String orderNumber, List<String> stockKeepingUnits) {
        if (stockKeepingUnits.isEmpty()) {
            throw new IllegalArgumentException("An order must reserve at least one stock keeping unit");
        }
        for (String stockKeepingUnit : stockKeepingUnits) {
            if (inventoryRepository.availableQuantityFor(stockKeepingUnit) <= 0) {
                return Optional.empty();
            }
        }
        StockKeepingUnitReservation reservation = new StockKeepingUnitReservation(
            orderNumber,
            stockKeepingUnits,
            Instant.now().plusSeconds(MAXIMUM_RESERVATION_DURATION_IN_MINUTES * 60L)
        );
        activeReservationsByOrderNumber.put(orderNumber, reservation);
        return Optional.of(reservation);
    }

    public void releaseExpiredReservations() {
        Instant currentInstant = Instant.now();
        activeReservationsByOrderNumber.values().removeIf(reservation -> reservation.expiresAt().isBefore(currentInstant));
    }
}
`,
  c: `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_BUFFER_CAPACITY_IN_BYTES 4096u

typedef struct ring_buffer {
    uint8_t storage[RING_BUFFER_CAPACITY_IN_BYTES];
    size_t read_position;
    size_t write_position;
    size_t bytes_currently_stored;
} ring_buffer_t;

static size_t ring_buffer_free_space(const ring_buffer_t *buffer) {
    return RING_BUFFER_CAPACITY_IN_BYTES - buffer->bytes_currently_stored;
}

int ring_buffer_write(ring_buffer_t *buffer, const uint8_t *source, size_t length) {
    if (length > ring_buffer_free_space(buffer)) {
        fprintf(stderr, "ring_buffer_write: %zu bytes requested, only %zu free\\n", length, ring_buffer_free_space(buffer));
        return -1;
    }
    for (size_t index = 0; index < length; ++index) {
        buffer->storage[buffer->write_position] = source[index];
        buffer->write_position = (buffer->write_position + 1) % RING_BUFFER_CAPACITY_IN_BYTES;
    }
    buffer->bytes_currently_stored += length;
    return 0;
}

size_t ring_buffer_read(ring_buffer_t *buffer, uint8_t *destination, size_t maximum_length) {
    size_t bytes_to_copy = maximum_length < buffer->bytes_currently_stored ? maximum_length : buffer->bytes_currently_stored;
    for (size_t index = 0; index < bytes_to_copy; ++index) {
        destination[index] = buffer->storage[buffer->read_position];
        buffer->read_position = (buffer->read_position + 1) % RING_BUFFER_CAPACITY_IN_BYTES;
    }
    buffer->bytes_currently_stored -= bytes_to_copy;
    return bytes_to_copy;
}
`,
  sql: `-- Monthly spend per account, with the share of the total that came from output tokens.
WITH monthly_usage AS (
    SELECT
        ledger_entries.account_id,
        date_trunc('month', ledger_entries.created_at) AS usage_month,
        SUM(ledger_entries.input_token_count) AS total_input_tokens,
        SUM(ledger_entries.output_token_count) AS total_output_tokens,
        SUM(ledger_entries.charged_micro_credits) AS total_charged_micro_credits
    FROM ledger_entries
    INNER JOIN accounts ON accounts.id = ledger_entries.account_id
    WHERE accounts.deleted_at IS NULL
      AND ledger_entries.created_at >= NOW() - INTERVAL '12 months'
    GROUP BY ledger_entries.account_id, usage_month
)
SELECT
    accounts.display_name,
    monthly_usage.usage_month,
    monthly_usage.total_charged_micro_credits / 1000000.0 AS total_charged_credits,
    ROUND(100.0 * monthly_usage.total_output_tokens / NULLIF(monthly_usage.total_input_tokens + monthly_usage.total_output_tokens, 0), 2) AS output_share_percent
FROM monthly_usage
JOIN accounts ON accounts.id = monthly_usage.account_id
ORDER BY monthly_usage.usage_month DESC, total_charged_credits DESC
LIMIT 500;
`,
  shell: `#!/usr/bin/env bash
set -euo pipefail

BACKUP_DESTINATION_DIRECTORY="\${BACKUP_DESTINATION_DIRECTORY:-/var/backups/tollgate}"
RETENTION_PERIOD_IN_DAYS=14
TIMESTAMP="$(date -u +%Y%m%dT%H%M%SZ)"

mkdir -p "$BACKUP_DESTINATION_DIRECTORY"
echo "[$(date -u +%H:%M:%S)] dumping database to $BACKUP_DESTINATION_DIRECTORY/tollgate-$TIMESTAMP.sql.gz"
pg_dump --no-owner --format=plain "$DATABASE_URL" | gzip -9 > "$BACKUP_DESTINATION_DIRECTORY/tollgate-$TIMESTAMP.sql.gz"

find "$BACKUP_DESTINATION_DIRECTORY" -name 'tollgate-*.sql.gz' -mtime "+$RETENTION_PERIOD_IN_DAYS" -print -delete
if ! gzip --test "$BACKUP_DESTINATION_DIRECTORY/tollgate-$TIMESTAMP.sql.gz"; then
  echo "backup archive is corrupt" >&2
  exit 1
fi
for file in "$BACKUP_DESTINATION_DIRECTORY"/*.sql.gz; do
  printf '%-60s %10s\\n' "$(basename "$file")" "$(du -h "$file" | cut -f1)"
done
`,
  'html and css': `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Usage dashboard</title>
    <style>
      .usage-summary-card { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 1.25rem; }
      .usage-summary-card__value { font: 600 2rem/1.1 system-ui, sans-serif; color: #1f2937; }
      .usage-summary-card__label { text-transform: uppercase; letter-spacing: 0.08em; color: #6b7280; }
      @media (prefers-color-scheme: dark) { .usage-summary-card__value { color: #f9fafb; } }
    </style>
  </head>
  <body>
    <main class="usage-summary-card" data-account-id="acct_7f3a">
      <section><span class="usage-summary-card__label">Credits left</span><span class="usage-summary-card__value">1,284.50</span></section>
      <section><span class="usage-summary-card__label">Requests today</span><span class="usage-summary-card__value">9,731</span></section>
    </main>
    <script type="module" src="/assets/dashboard.js"></script>
  </body>
</html>
`,
}

const json: Record<string, string> = {
  'chat request': JSON.stringify(
    {
      model: 'gpt-4o-mini',
      temperature: 0.2,
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'You are a careful assistant that answers in short paragraphs.' },
        { role: 'user', content: 'What is the difference between a hold and a charge in a prepaid billing system?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup_account_balance',
            description: 'Returns the available and held credit of an account.',
            parameters: {
              type: 'object',
              properties: { account_id: { type: 'string', description: 'The account identifier, e.g. acct_01H8Z' } },
              required: ['account_id'],
            },
          },
        },
      ],
    },
    null,
    2,
  ),
  'usage export': JSON.stringify(
    Array.from({ length: 12 }, (_, index) => ({
      id: `req_${(0x5f3a11 + index * 7919).toString(16)}`,
      created_at: new Date(Date.UTC(2025, 2, 1 + index, 9, index * 4, 17)).toISOString(),
      model: index % 3 === 0 ? 'claude-sonnet' : index % 3 === 1 ? 'gpt-4o' : 'text-embedding-3-small',
      usage: { input_tokens: 1200 + index * 37, output_tokens: index * 211, cached: index % 2 === 0 },
      charged_credits: Number((0.0042 * (index + 1)).toFixed(4)),
    })),
  ),
  'package manifest': `{
  "name": "@acme/media-probe",
  "version": "2.14.0-beta.3",
  "description": "Detect the file type of a Buffer, Uint8Array or stream by its magic number",
  "license": "MIT",
  "type": "module",
  "exports": { ".": { "types": "./dist/index.d.ts", "import": "./dist/index.js" }, "./package.json": "./package.json" },
  "engines": { "node": ">=18.17" },
  "scripts": { "build": "tsc -p tsconfig.build.json", "test": "vitest run --coverage", "lint": "eslint . --max-warnings=0" },
  "keywords": ["mime", "file", "type", "magic", "detect", "png", "jpg", "webp", "avif", "heic", "gif", "tiff", "psd", "pdf", "epub", "mobi", "zip", "tar", "gz", "xz", "zst", "7z", "rar", "mp3", "m4a", "ogg", "opus", "flac", "wav", "mp4", "mkv", "webm", "mov", "avi", "woff2", "otf", "ttf", "exe", "elf", "wasm", "sqlite", "parquet", "arrow"],
  "dependencies": { "strtok3": "^9.1.1", "token-types": "^6.0.0", "uint8array-extras": "^1.4.0" },
  "devDependencies": { "@types/node": "^22.10.2", "typescript": "~5.7.2", "vitest": "^2.1.8", "xo": "^0.60.0" },
  "repository": "github:acme/media-probe",
  "funding": "https://github.com/sponsors/acme"
}`,
  'localized strings': JSON.stringify(
    {
      'checkout.title': 'Kasse',
      'checkout.pay_now': 'Jetzt bezahlen',
      'checkout.card_declined': 'Ihre Karte wurde abgelehnt. Bitte versuchen Sie es mit einer anderen Zahlungsmethode.',
      'errors.insufficient_balance': 'Solde insuffisant : rechargez votre compte pour continuer.',
      'errors.rate_limited': 'Demasiadas solicitudes. Inténtalo de nuevo en unos segundos.',
      'settings.api_keys.empty': 'You have not created any API keys yet.',
      'settings.language': '言語設定',
    },
    null,
    2,
  ),
  'config file': `{
  "server": { "host": "0.0.0.0", "port": 8080, "trustProxyHeaders": true },
  "database": { "url": "postgres://tollgate:secret@db.internal:5432/tollgate", "poolSize": 20 },
  "providers": {
    "openai": { "baseUrl": "https://api.openai.com/v1", "timeoutMilliseconds": 120000 },
    "anthropic": { "baseUrl": "https://api.anthropic.com", "timeoutMilliseconds": 300000 }
  },
  "models": [
    { "id": "fast", "upstream": "openai/gpt-4o-mini", "inputPricePerMillion": 0.15, "outputPricePerMillion": 0.6 },
    { "id": "smart", "upstream": "anthropic/claude-sonnet-4", "inputPricePerMillion": 3, "outputPricePerMillion": 15 }
  ],
  "holds": { "expireAfterSeconds": 900, "sweepIntervalSeconds": 30 }
}`,
}

const cjk: Record<string, string> = {
  chinese: `人工智能正在改变软件开发的方式。过去，程序员需要手动编写每一行代码，而现在，许多重复性的工作可以交给模型来完成。
不过，这并不意味着工程师的工作变得更简单了。相反，他们需要更仔细地审查生成的代码，理解其中的边界条件，并确保系统在高并发的情况下依然稳定。
我们公司在去年引入了一套新的计费系统，用于记录每一次模型调用的费用。每个请求在发送之前都会先冻结一部分余额，等到结果返回之后再按照实际用量结算。
这样做的好处是，即使多个请求同时进行，账户余额也不会变成负数。`,
  'classical chinese': `学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？
天行健，君子以自强不息。地势坤，君子以厚德载物。
曾子曰：吾日三省吾身：为人谋而不忠乎？与朋友交而不信乎？传不习乎？
窈窕淑女，君子好逑。参差荇菜，左右流之。鬱鬱蔥蔥，龘龘齉齉，饕餮魑魅魍魉。`,
  japanese: `昨日、新しいプロジェクトの打ち合わせがありました。チームのメンバーは全部で五人で、それぞれが異なる専門分野を持っています。
私はバックエンドのデータベース設計を担当することになりました。来週までに、テーブルの構成とインデックスの方針をまとめて、
レビューをお願いする予定です。締め切りは少し厳しいですが、できる限り丁寧に進めたいと思います。
ところで、駅前に新しくできたラーメン屋さんはとても美味しかったです。また今度、みんなで行きましょう。`,
  korean: `오늘은 날씨가 정말 좋아서 오랜만에 공원에 산책을 다녀왔습니다. 나무들이 초록색으로 물들어 있었고, 많은 사람들이 돗자리를 펴고
점심을 먹고 있었습니다. 저는 벤치에 앉아서 책을 읽다가 잠깐 졸기도 했습니다. 돌아오는 길에는 새로 생긴 카페에 들러서
따뜻한 라떼를 한 잔 마셨는데, 생각보다 맛있어서 다음에 친구와 함께 다시 오기로 마음먹었습니다. 내일부터는 다시 바쁜 일주일이 시작됩니다.`,
}

/** Other languages in Latin script: each costs more than English, by accents, letter pairs or word endings. */
const latin: Record<string, string> = {
  french: `Hier soir, nous avons discuté avec l'équipe de la meilleure façon de facturer les appels aux modèles. Chaque requête
réserve d'abord une partie du solde, puis le coût réel est prélevé après la réponse. Si l'estimation est trop basse, le client
pourrait dépenser davantage que ce qui a été réservé ; c'est pourquoi elle doit rester prudente sans être excessive.`,
  spanish: `Ayer por la tarde hablamos con el equipo sobre cómo cobrar las llamadas a los modelos. Cada solicitud reserva primero una
parte del saldo y, después de recibir la respuesta, se descuenta el coste real. Si la estimación es demasiado baja, el cliente
podría gastar más de lo reservado; por eso debe ser prudente, pero no exagerada. ¿Alguien tiene preguntas? ¡Avísenme!`,
  italian: `Ieri sera abbiamo discusso con il gruppo su come addebitare le chiamate ai modelli. Ogni richiesta riserva prima una
parte del saldo e, dopo aver ricevuto la risposta, viene addebitato il costo effettivo. Se la stima è troppo bassa, il cliente
potrebbe spendere più di quanto riservato; per questo deve essere prudente, ma non eccessiva.`,
  dutch: `Gisteravond hebben we met het team besproken hoe we de aanroepen van modellen het beste kunnen afrekenen. Elk verzoek
reserveert eerst een deel van het saldo, en na ontvangst van het antwoord wordt de werkelijke kosten afgeschreven. Als de schatting
te laag uitvalt, kan de klant meer uitgeven dan gereserveerd was. Verzekeringsmaatschappijen en arbeidsongeschiktheidsverzekeringen.`,
  portuguese: `Ontem à noite conversamos com a equipe sobre a melhor maneira de cobrar as chamadas aos modelos. Cada solicitação
reserva primeiro uma parte do saldo e, depois de receber a resposta, o custo real é descontado. Se a estimativa for muito baixa,
o cliente poderá gastar mais do que foi reservado; por isso ela deve ser cautelosa, mas não exagerada.`,
  finnish: `Eilen illalla keskustelimme tiimin kanssa siitä, miten mallikutsut kannattaa laskuttaa. Jokainen pyyntö varaa ensin
osan saldosta, ja vastauksen saavuttua veloitetaan todellinen hinta. Lentokonesuihkuturbiinimoottoriapumekaanikkoaliupseerioppilas.`,
  czech: `Včera večer jsme s týmem probírali, jak nejlépe účtovat volání modelů. Každý požadavek nejprve zarezervuje část zůstatku
a po obdržení odpovědi se strhne skutečná cena. Strč prst skrz krk. Nejnepravděpodobnějšími.`,
  vietnamese: `Hôm qua nhóm chúng tôi đã họp về hệ thống tính phí mới. Mỗi yêu cầu sẽ giữ lại một phần số dư trước khi gửi đến mô hình,
và sau khi nhận được kết quả thì mới trừ chi phí thực tế. Nếu ước tính quá thấp, khách hàng có thể tiêu nhiều hơn số tiền đã giữ.`,
  turkish: `Dün akşam ekip arkadaşlarımızla yeni faturalandırma sistemini konuştuk. Çekoslovakyalılaştıramadıklarımızdanmışsınız gibi
uzun kelimeler Türkçede şaşırtıcı derecede sık görülür; bu yüzden tahminin kısa kelimelere göre ayarlanması yanıltıcı olabilir.`,
  polish: `Wczoraj wieczorem rozmawialiśmy o tym, jak najlepiej rozliczać wywołania modeli. Każde żądanie najpierw rezerwuje część
środków, a po otrzymaniu odpowiedzi pobierana jest rzeczywista opłata. Źdźbło trawy, chrząszcz brzmi w trzcinie w Szczebrzeszynie.`,
}

const scripts: Record<string, string> = {
  russian: `Вчера вечером мы обсуждали с коллегами, как лучше организовать учёт расходов на вызовы моделей.
Каждый запрос сначала резервирует часть баланса, а после получения ответа списывается фактическая стоимость.
Если оценка количества токенов окажется слишком низкой, клиент может потратить больше, чем было зарезервировано.
Поэтому оценка должна быть осторожной, но не чрезмерной: иначе пользователи с небольшим балансом будут получать отказы.`,
  ukrainian: `Щоранку я п'ю каву на балконі й дивлюся, як місто прокидається. Сусідка поливає квіти, листоноша
поспішає з сумкою, а діти біжать до школи, тримаючи в руках рюкзаки й бутерброди. Ґанок старого будинку ще мокрий після дощу.`,
  greek: `Η τεχνητή νοημοσύνη αλλάζει τον τρόπο με τον οποίο γράφουμε λογισμικό. Παρόλα αυτά, οι μηχανικοί πρέπει
να ελέγχουν προσεκτικά κάθε αλλαγή, να κατανοούν τις οριακές περιπτώσεις και να φροντίζουν ώστε το σύστημα να παραμένει
σταθερό ακόμη και όταν χιλιάδες αιτήματα φτάνουν ταυτόχρονα.`,
  arabic: `يعمل فريقنا على تطوير نظام جديد لإدارة الحسابات والفواتير. يقوم النظام بحجز جزء من الرصيد قبل كل طلب، ثم يحسب
التكلفة الفعلية بعد وصول الرد. إذا كان التقدير منخفضًا جدًا، فقد يتجاوز الاستهلاك المبلغ المحجوز، ولذلك يجب أن يكون
التقدير حذرًا. سنعقد اجتماعًا يوم الخميس القادم لمناقشة التفاصيل، الساعة ٣:٣٠ مساءً.`,
  hebrew: `שלום לכולם, רציתי לעדכן שהפגישה של מחר נדחתה ליום חמישי בשעה עשר בבוקר. בבקשה תביאו איתכם את הדוחות
של הרבעון האחרון, ואת רשימת המשימות הפתוחות. אם מישהו לא יכול להגיע, אנא הודיעו לי עד הערב כדי שאוכל לעדכן את כולם.`,
  hindi: `कल शाम हमने टीम के साथ नई बिलिंग प्रणाली के बारे में चर्चा की। हर अनुरोध से पहले खाते की कुछ राशि आरक्षित की जाती है,
और जवाब मिलने के बाद वास्तविक लागत काट ली जाती है। अगर अनुमान बहुत कम हो, तो ग्राहक आरक्षित राशि से अधिक खर्च कर सकता है।
इसलिए अनुमान सावधानी से लगाना ज़रूरी है।`,
  thai: `เมื่อวานนี้ทีมของเราได้ประชุมเรื่องระบบการเรียกเก็บเงินแบบใหม่ ทุกคำขอจะกันยอดเงินไว้ส่วนหนึ่งก่อนส่งไปยังโมเดล
และเมื่อได้รับคำตอบแล้วจึงหักค่าใช้จ่ายจริง ถ้าการประมาณการต่ำเกินไป ลูกค้าอาจใช้จ่ายเกินกว่ายอดที่กันไว้`,
  armenian: `Բարև ձեզ, ես ուզում էի տեղեկացնել, որ վաղվա հանդիպումը տեղափոխվել է հինգշաբթի առավոտյան ժամը տասին։`,
  georgian: `გამარჯობა, მინდოდა გაცნობოთ, რომ ხვალინდელი შეხვედრა გადაიდო ხუთშაბათს, დილის ათ საათზე.`,
}

/** Emoji as people type them: single pictographs, skin tones, families joined by ZWJ, flags, keycaps. */
const emojiSequences = [
  '😀',
  '😂',
  '🥲',
  '🤔',
  '🙃',
  '😍',
  '🥺',
  '😭',
  '🔥',
  '✨',
  '🎉',
  '🚀',
  '❤️',
  '💔',
  '✅',
  '❌',
  '⚠️',
  '👀',
  '🤝',
  '🙏',
  '👍🏻',
  '👍🏽',
  '👍🏿',
  '👋🏼',
  '🤷🏾‍♀️',
  '🧑🏻‍💻',
  '👩🏽‍🔬',
  '🏃🏿‍♂️',
  '🙋🏻‍♀️',
  '👨‍👩‍👧‍👦',
  '👩‍❤️‍👨',
  '👨‍👨‍👦',
  '🏳️‍🌈',
  '🏳️‍⚧️',
  '🐻‍❄️',
  '😮‍💨',
  '❤️‍🔥',
  '🧔‍♀️',
  '🇺🇸',
  '🇩🇪',
  '🇯🇵',
  '🇧🇷',
  '🇺🇦',
  '🇮🇳',
  '🇿🇦',
  '🇪🇺',
  '🏴󠁧󠁢󠁳󠁣󠁴󠁿',
  '1️⃣',
  '#️⃣',
  '©️',
  '™️',
  '🅰️',
  '🆗',
  '🦩',
  '🫠',
  '🪼',
  '🫶🏾',
  '🧌',
  '🪿',
]

/** Code point ranges of pictographs, dingbats and other symbols, for generated emoji soup. */
const EMOJI_RANGES: [number, number][] = [
  [0x1f300, 0x1f5ff],
  [0x1f600, 0x1f64f],
  [0x1f680, 0x1f6ff],
  [0x1f900, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x2600, 0x27bf],
]
const CHAT_LINES = ['great work', 'lol', 'on my way', 'happy birthday', 'ship it']
const SKIN_TONES = ['\u{1f3fb}', '\u{1f3fc}', '\u{1f3fd}', '\u{1f3fe}', '\u{1f3ff}']

function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64')
}

function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

/** count results of make, one a line (or joined by separator). */
function repeated(count: number, make: (index: number) => string, separator = '\n'): string {
  return Array.from({ length: count }, (_, index) => make(index)).join(separator)
}

const unpadded = (base64: string) => base64.replace(/=+$/, '')
const urlSafe = (base64: string) => unpadded(base64).replaceAll('+', '-').replaceAll('/', '_')

function randomUuid(random: () => number): string {
  const hex = hexOf(randomBytes(random, 16))
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The generated samples; the test uses one fixed seed, other seeds give fresh strings of the same kinds. */
export function generatedSamples(seed: number): Sample[] {
  const random = seededRandom(seed)
  const samples: Sample[] = []
  const add = (textClass: TextClass, name: string, text: string) => samples.push({ textClass, name, text })

  // base64: every padding length, standard and URL-safe alphabets, wrapped MIME lines, and encoded text.
  for (const length of [300, 301, 302, 1500]) add('base64', `random bytes ${length}`, base64Of(randomBytes(random, length)))
  add('base64', 'url-safe', urlSafe(base64Of(randomBytes(random, 900))))
  add('base64', 'mime lines', (base64Of(randomBytes(random, 1200)).match(/.{1,76}/g) ?? []).join('\r\n'))
  add('base64', 'encoded prose', Buffer.from(Object.values(english).join('\n\n')).toString('base64'))
  add('base64', 'data url', `data:image/png;base64,${base64Of(randomBytes(random, 700))}`)
  add('base64', 'short padded', [4, 5, 1].map((length) => base64Of(randomBytes(random, length))).join(' '))

  // hex: digests, dumps with spaces, uppercase, and 0x constants.
  add('hex', 'lowercase', hexOf(randomBytes(random, 600)))
  add('hex', 'uppercase', hexOf(randomBytes(random, 400)).toUpperCase())
  add(
    'hex',
    'sha256 list',
    repeated(20, () => `sha256:${hexOf(randomBytes(random, 32))}`),
  )
  const dumpLine = (line: number) => `${(line * 16).toString(16).padStart(8, '0')}  ${hexOf(randomBytes(random, 16)).replace(/(..)(?!$)/g, '$1 ')}`
  add('hex', 'dump', repeated(24, dumpLine))
  add(
    'hex',
    'constants',
    repeated(60, () => `0x${hexOf(randomBytes(random, 4)).toUpperCase()}`, ', '),
  )

  // random strings: mixed case and digits, single case, keys, UUIDs, URLs, passwords.
  add('random', 'alphanumeric', randomString(random, ALPHANUMERIC, 1500))
  add(
    'random',
    'alphanumeric words',
    repeated(80, () => randomString(random, ALPHANUMERIC, 4 + Math.floor(random() * 20)), ' '),
  )
  add('random', 'lowercase letters', randomString(random, LOWER, 1200))
  add(
    'random',
    'lowercase words',
    repeated(150, () => randomString(random, LOWER, 2 + Math.floor(random() * 10)), ' '),
  )
  add('random', 'uppercase letters', randomString(random, UPPER, 1000))
  add('random', 'lowercase and digits', randomString(random, LOWER + DIGITS, 1000))
  add('random', 'digits', randomString(random, DIGITS, 900))
  add(
    'random',
    'api keys',
    repeated(12, () => `sk-proj-${randomString(random, ALPHANUMERIC, 48)}`),
  )
  add(
    'random',
    'uuids',
    repeated(30, () => randomUuid(random)),
  )
  const url = () => {
    const path = `${randomString(random, LOWER + DIGITS, 10)}/${randomUuid(random)}.png`
    return `https://cdn.example.com/u/${path}?sig=${randomString(random, ALPHANUMERIC, 32)}&exp=${Math.floor(random() * 1e10)}`
  }
  add('random', 'urls', repeated(15, url))
  add('random', 'printable ascii', randomString(random, PRINTABLE, 1200))
  add(
    'random',
    'passwords',
    repeated(40, () => randomString(random, PRINTABLE.slice(1), 16)),
  )
  const jwtHeader = urlSafe(Buffer.from('{"alg":"RS256","typ":"JWT"}').toString('base64'))
  add('random', 'jwt', `${jwtHeader}.${unpadded(base64Of(randomBytes(random, 220)))}.${urlSafe(base64Of(randomBytes(random, 256)))}`)
  add('random', 'whitespace', randomString(random, '  \t\n', 500))
  add('random', 'repeated characters', ['a', '=', '-', ' ', '0', '.', '#', '*', '\n'].map((character) => character.repeat(200)).join('x'))

  // CJK beyond everyday text: rare ideographs and random syllables tokenize worst.
  add('cjk', 'random ideographs', randomCodePoints(random, [[0x4e00, 0x9fff]], 400))
  add(
    'cjk',
    'rare ideographs',
    randomCodePoints(
      random,
      [
        [0x3400, 0x4dbf],
        [0x20000, 0x2a6df],
      ],
      200,
    ),
  )
  add('cjk', 'random hangul', randomCodePoints(random, [[0xac00, 0xd7a3]], 400))
  add(
    'cjk',
    'random kana',
    randomCodePoints(
      random,
      [
        [0x3041, 0x3096],
        [0x30a1, 0x30fa],
      ],
      400,
    ),
  )

  // Other scripts, random letters: no merges to lean on.
  add('scripts', 'random cyrillic', randomCodePoints(random, [[0x430, 0x44f]], 600))
  add('scripts', 'random greek', randomCodePoints(random, [[0x3b1, 0x3c9]], 600))
  add('scripts', 'random arabic', randomCodePoints(random, [[0x621, 0x64a]], 600))
  add('scripts', 'random hebrew', randomCodePoints(random, [[0x5d0, 0x5ea]], 600))
  add(
    'scripts',
    'random devanagari',
    randomCodePoints(
      random,
      [
        [0x905, 0x939],
        [0x93e, 0x94d],
      ],
      600,
    ),
  )
  add('scripts', 'random thai', randomCodePoints(random, [[0xe01, 0xe3a]], 600))
  add(
    'scripts',
    'math and symbols',
    randomCodePoints(
      random,
      [
        [0x2200, 0x22ff],
        [0x2190, 0x21ff],
        [0x2500, 0x257f],
      ],
      500,
    ),
  )
  add('scripts', 'fullwidth', randomCodePoints(random, [[0xff01, 0xff5e]], 400))
  add('scripts', 'math letters', randomCodePoints(random, [[0x1d400, 0x1d6a3]], 300))
  const zalgo = () => randomString(random, LOWER, 1) + randomCodePoints(random, [[0x300, 0x36f]], 1 + Math.floor(random() * 3))
  add('scripts', 'combining marks', repeated(200, zalgo, ''))

  // Emoji: generated soup with and without skin tones, every handwritten sequence, emoji inside chat.
  add('emoji', 'pictographs', randomCodePoints(random, EMOJI_RANGES, 400))
  const toned = () =>
    randomCodePoints(
      random,
      [
        [0x1f466, 0x1f469],
        [0x1f44a, 0x1f450],
      ],
      1,
    ) + oneOf(random, SKIN_TONES)
  add('emoji', 'skin tones', repeated(150, toned, ''))
  add(
    'emoji',
    'flags',
    repeated(150, () => randomCodePoints(random, [[0x1f1e6, 0x1f1ff]], 2), ''),
  )
  add('emoji', 'sequences', emojiSequences.join(''))
  add('emoji', 'sequences spaced', emojiSequences.join(' '))
  const family = () => repeated(2 + Math.floor(random() * 3), () => randomCodePoints(random, [[0x1f466, 0x1f469]], 1), '\u200d')
  add('emoji', 'zwj families', repeated(60, family, ' '))
  add(
    'emoji',
    'in chat',
    repeated(40, (index) => `${CHAT_LINES[index % CHAT_LINES.length]} ${oneOf(random, emojiSequences).repeat(1 + (index % 3))}`),
  )
  return samples
}

const mixed: Record<string, string> = {
  'markdown answer': `## How to rotate an API key 🔑

1. Open **Settings → API keys** and click *Create key*.
2. Copy the new key (it starts with \`sk-\`) into your secret store.
3. Deploy, then revoke the old key:

\`\`\`bash
curl -X DELETE https://gateway.example.com/admin/keys/key_01HZX3Q9 \\
  -H "Authorization: Bearer $ADMIN_TOKEN"
\`\`\`

| Step | Downtime | Notes |
|------|----------|-------|
| create | none | both keys work |
| revoke | none | old key → 401 |

That's it! ✅ If anything breaks, roll back within 15 min — the old key stays valid until revoked.`,
  'server log': `2025-03-14T09:21:07.412Z INFO  request_id=2f9c1a7e-44b1-4c0e-9d6a-0b8f3e21c5d4 method=POST path=/v1/chat/completions status=200 duration_ms=1834 tokens_in=1207 tokens_out=388
2025-03-14T09:21:07.519Z WARN  request_id=8a0e55d2-1f7c-4e9b-b3a1-6c2d9f0e7a13 upstream=api.openai.com retry=1 error="ECONNRESET"
2025-03-14T09:21:08.003Z ERROR request_id=c41b7e90-3d2a-4f18-a5e6-91b0d4c7f2e8 msg="hold settlement failed" account=acct_9QZ2 hold=hold_7781 amount_micros=125000
    at settleHold (/app/src/billing/hold-book.ts:142:17)
    at processTicksAndRejections (node:internal/process/task_queues:95:5)
10.0.3.17 - - [14/Mar/2025:09:21:08 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.29"`,
  'multilingual chat': `User: Can you translate "good morning" into a few languages?
Assistant: Sure! Here you go:
- German: Guten Morgen ☀️
- Japanese: おはようございます
- Chinese: 早上好
- Korean: 좋은 아침입니다
- Russian: Доброе утро
- Arabic: صباح الخير
- Hindi: सुप्रभात
Let me know if you need more 🙂`,
  csv: `order_id,customer_email,sku,quantity,unit_price_eur,created_at
100231,anna.schmidt@example.de,SKU-4471-BLK,2,19.99,2025-01-03T10:15:00Z
100232,j.o'neill@example.ie,SKU-0098-WHT,1,249.00,2025-01-03T10:17:42Z
100233,li.wei@example.cn,SKU-7312-RED,12,3.49,2025-01-03T10:21:09Z
100234,m.dubois@example.fr,SKU-4471-BLK,1,19.99,2025-01-03T10:22:58Z
100235,s.yamamoto@example.jp,SKU-5560-GRN,4,72.10,2025-01-03T10:30:31Z`,
  'math and numbers': `Given f(x) = 3.14159x² − 2.71828x + 1.41421, f'(x) = 6.28318x − 2.71828, so the minimum is at
x ≈ 0.43258 where f(x) ≈ 0.82627. In 2024 the fund returned +12.7% (vs. 9.3% benchmark); fees were 0.35% p.a.
on €1,250,000.00, i.e. €4,375.00. Phone: +49 (0)30 1234-5678. IP 192.168.100.254:8443, version v2.17.3-rc.1.`,
}

const short: string[] = [
  'hello',
  'Hello',
  ' ',
  '\n',
  'a',
  '42',
  '3.14159',
  '1000000',
  '-7',
  '2025-03-14',
  'Donaudampfschifffahrtsgesellschaftskapitän',
  'Rechtsschutzversicherungsgesellschaften',
  'Grundstücksverkehrsgenehmigungszuständigkeitsübertragungsverordnung',
  'antidisestablishmentarianism',
  'getUserAccountBalanceByIdentifier',
  'calculate_monthly_invoice_totals_for_customer',
  'XMLHttpRequest',
  'MAXIMUM_RESERVATION_DURATION_IN_MINUTES',
  'kqzvxplmwr',
  'aZ3kQ9xP2mN7',
  'sk-proj-Q8zL0aXv3TbN7wE2',
  '550e8400-e29b-41d4-a716-446655440000',
  '0xdeadbeef',
  'SGVsbG8gV29ybGQh',
  'YQ==',
  'https://example.com/a/b?c=d&e=f',
  '😀',
  '🦩',
  '👍🏽',
  '👨‍👩‍👧‍👦',
  '🇺🇸',
  '🏴󠁧󠁢󠁥󠁮󠁧󠁿',
  '❤️',
  '1️⃣',
  '你',
  '龘',
  '𠀀',
  'こんにちは',
  '안녕하세요',
  'Привет',
  'שלום',
  'مرحبا',
  'नमस्ते',
  'สวัสดี',
  'ｈｅｌｌｏ',
  'naïve café',
  '...',
  '!!!???',
  '{}',
  '\t\t',
  '    ',
]

export function corpus(): Sample[] {
  const handWritten: [TextClass, Record<string, string>][] = [
    ['english', english],
    ['german', german],
    ['latin', latin],
    ['code', code],
    ['json', json],
    ['cjk', cjk],
    ['scripts', scripts],
    ['mixed', mixed],
  ]
  const samples: Sample[] = handWritten.flatMap(([textClass, texts]) => Object.entries(texts).map(([name, text]) => ({ textClass, name, text })))
  samples.push(...short.map((text) => ({ textClass: 'short' as const, name: JSON.stringify(text), text })))
  samples.push(...generatedSamples(0x7011_6a7e))
  return samples
}

/** The repository's own files: documentation, code and JSON as they are today. */
export function repositorySamples(): Sample[] {
  const read = (path: string) => readFileSync(path, 'utf8')
  return [
    { textClass: 'mixed', name: 'README.md', text: read('README.md') },
    { textClass: 'code', name: 'src/billing/hold-book.ts', text: read('src/billing/hold-book.ts') },
    { textClass: 'json', name: 'drizzle/meta/_journal.json', text: read('drizzle/meta/_journal.json') },
    { textClass: 'mixed', name: 'numbers', text: Array.from({ length: 200 }, (_, index) => (index * 7919).toString()).join(', ') },
  ]
}

/** Numbers as JSON values: their estimate is checked against the tokenizer's count of their digits. */
export const JSON_NUMBERS = [7, 1234567890123, 3.25159265358979, -98765.4321e-12, 2 ** 53]

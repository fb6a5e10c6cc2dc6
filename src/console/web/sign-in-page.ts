import { isAdminToken, session } from './api'
import { field, h, input } from './dom'

/** The admin token is checked before it is kept for the tab. */
export function signInPage(signedIn: () => void): HTMLElement {
  const token = input('token', { type: 'password', required: true, autocomplete: 'current-password', autofocus: true })
  const message = h('p', { class: 'notice error', role: 'alert', hidden: true })
  const form = h(
    'form',
    {
      class: 'card sign-in',
      onsubmit: async (event) => {
        event.preventDefault()
        try {
          if (await isAdminToken(token.value.trim())) {
            session.signIn(token.value.trim())
            signedIn()
            return
          }
          message.textContent = 'That is not the admin token.'
        } catch (error) {
          message.textContent = error instanceof Error ? error.message : String(error)
        }
        message.hidden = false
        token.focus()
      },
    },
    h('h1', {}, 'Tollgate console'),
    h('p', {}, 'Sign in with the gateway’s admin token (TOLLGATE_ADMIN_TOKEN). It is kept for this tab only.'),
    field('Admin token', token),
    message,
    h('button', { type: 'submit' }, 'Sign in'),
  )
  return h('main', { class: 'center' }, form)
}
